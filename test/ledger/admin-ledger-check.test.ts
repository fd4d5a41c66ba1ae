import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { systemAccounts, userAccount } from '../../src/ledger/accounts.ts';
import { checkLedger, type LedgerCheck } from '../../src/ledger/check.ts';
import { post as postLedger } from '../../src/ledger/postings.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { uniqueReference } from './ledger-fixtures.ts';

type WalletView = {
  balance: number;
  lockedSavings: number;
  lockedBonus: number;
  checkinAccrued: number;
  heldBalance: number;
  currency: string;
};

describe('adminLedgerCheck and getWallet over HTTP', () => {
  const adminPhone = uniquePhone();
  let world: World;
  let admin: SignedIn;
  let user: SignedIn;
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
    user = await signIn(world);
  });
  after(() => world.close());

  const ledgerCheck = async (token: string) =>
    ok(await get<LedgerCheck>(world, 'adminLedgerCheck', {}, { token }));

  async function accountCount(): Promise<number> {
    const row = await world.ctx.db
      .selectFrom('ledger_accounts')
      .select((eb) => eb.fn.countAll<bigint>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it('returns the ledger check to an admin', async () => {
    const check = await ledgerCheck(admin.accessToken);
    assert.equal(check.ok, true);
    assert.deepEqual(check.imbalances, []);
    // Six system accounts and four per signed-in user, at least; exactly what the table holds.
    assert.ok(check.accounts >= 6 + 4 * 2);
    assert.equal(check.accounts, await accountCount());
    assert.deepEqual(check, await checkLedger(world.ctx.db));
  });

  it('refuses a signed-in user who is not an admin with 403 FORBIDDEN', async () => {
    const error = failure(await get(world, 'adminLedgerCheck', {}, { token: user.accessToken }));
    assert.equal(error.status, 403);
    assert.equal(error.code, 'FORBIDDEN');
  });

  it('refuses a caller without a valid token with 401 UNAUTHENTICATED', async () => {
    const none = failure(await get(world, 'adminLedgerCheck'));
    assert.equal(none.status, 401);
    assert.equal(none.code, 'UNAUTHENTICATED');
    const forged = failure(await get(world, 'adminLedgerCheck', {}, { token: 'x'.repeat(43) }));
    assert.equal(forged.status, 401);
    assert.equal(forged.code, 'UNAUTHENTICATED');
  });

  it('shows a credited amount in naira to the kobo', async () => {
    const token = user.accessToken;
    const before = ok(await get<WalletView>(world, 'getWallet', {}, { token }));
    assert.deepEqual(before, {
      balance: 0,
      lockedSavings: 0,
      lockedBonus: 0,
      checkinAccrued: 0,
      heldBalance: 0,
      currency: 'NGN',
    });
    const entriesBefore = (await ledgerCheck(admin.accessToken)).entries;

    const wallet = userAccount('wallet', user.userId);
    await postLedger(
      world.ctx.db,
      {
        reference: uniqueReference('top'),
        description: 'top-up',
        entries: [
          { account: systemAccounts.collectionsPool, amount: -123_456n },
          { account: wallet, amount: 123_456n },
        ],
      },
      world.ctx.clock.now(),
    );
    assert.deepEqual(ok(await get<WalletView>(world, 'getWallet', {}, { token })), {
      balance: 1234.56,
      lockedSavings: 0,
      lockedBonus: 0,
      checkinAccrued: 0,
      heldBalance: 0,
      currency: 'NGN',
    });

    // A single kobo moved to savings shows on both sides.
    await postLedger(
      world.ctx.db,
      {
        reference: uniqueReference('sav'),
        description: 'lock savings',
        entries: [
          { account: wallet, amount: -1n },
          { account: userAccount('savings', user.userId), amount: 1n },
        ],
      },
      world.ctx.clock.now(),
    );
    const after = ok(await get<WalletView>(world, 'getWallet', {}, { token }));
    assert.equal(after.balance, 1234.55);
    assert.equal(after.lockedSavings, 0.01);

    const check = await ledgerCheck(admin.accessToken);
    assert.equal(check.ok, true);
    assert.equal(check.entries, entriesBefore + 4);
  });

  it('reports a tampered balance to the admin', async () => {
    const wallet = userAccount('wallet', user.userId);
    const { balance } = await world.ctx.db
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('code', '=', wallet)
      .executeTakeFirstOrThrow();
    await sql`update ledger_accounts set balance = balance + 1 where code = ${wallet}`.execute(world.ctx.db);
    try {
      const check = await ledgerCheck(admin.accessToken);
      assert.equal(check.ok, false);
      assert.deepEqual(check.imbalances, [
        { kind: 'account', account: wallet, balance: String(balance + 1n), entriesSum: String(balance) },
      ]);
    } finally {
      await sql`update ledger_accounts set balance = balance - 1 where code = ${wallet}`.execute(
        world.ctx.db,
      );
    }
    assert.equal((await ledgerCheck(admin.accessToken)).ok, true);
  });
});
