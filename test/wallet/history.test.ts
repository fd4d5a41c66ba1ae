import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { systemAccounts, userAccount } from '../../src/ledger/accounts.ts';
import { post as postLedger } from '../../src/ledger/postings.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  processed,
  sendWebhook,
} from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';

// The wallet history (API.md sections 5 and 6): the caller's wallet entries from the ledger, newest
// first, limit/offset paging, one entry by id; another user's entry is 404.

type Item = {
  id: string;
  reference: string;
  description: string;
  direction: 'credit' | 'debit';
  amount: number;
  balanceAfter: number;
  createdAt: string;
  kind: string;
};
type Page = { items: Item[]; limit: number; offset: number; total: number };

describe(`wallet history (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  let other: SignedIn;
  const references: string[] = [];

  async function topUp(who: SignedIn, naira: number): Promise<string> {
    const intent = await createIntent(world, who, naira);
    const body = chargeSuccess(intent.reference, Math.round(naira * 100));
    assert.equal((await sendWebhook(world, body)).status, 200);
    assert.equal((await processed(world, body)).outcome, 'credited');
    return intent.reference;
  }

  before(async () => {
    world = await createWorld();
    user = await signIn(world);
    other = await signIn(world);
    references.push(await topUp(user, 150));
    references.push(await topUp(user, 250.75));
    // A debit, as a purchase will make one (through the ledger, like every movement).
    await postLedger(
      world.ctx.db,
      {
        reference: `test-debit-${user.userId}`,
        description: 'Airtime purchase',
        entries: [
          { account: userAccount('wallet', user.userId), amount: -5_000n },
          { account: systemAccounts.vtuInFlight, amount: 5_000n },
        ],
      },
      world.ctx.clock.now(),
    );
    await topUp(other, 999);
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  it('lists the caller’s entries newest first with running balances', BOUNDED, async () => {
    const page = ok(await get<Page>(world, 'listTransactions', {}, { token: user.accessToken }));
    assert.equal(page.limit, 20);
    assert.equal(page.offset, 0);
    assert.equal(page.total, 3);
    assert.deepEqual(
      page.items.map((i) => [i.reference, i.direction, i.amount, i.balanceAfter]),
      [
        [`test-debit-${user.userId}`, 'debit', 50, 350.75],
        [`topup:${references[1]}`, 'credit', 250.75, 400.75],
        [`topup:${references[0]}`, 'credit', 150, 150],
      ],
    );
    assert.equal(page.items[1]?.description, 'Wallet top-up');
    // A top-up is one; a posting no domain makes (the test's own debit) is an adjustment.
    assert.deepEqual(
      page.items.map((i) => i.kind),
      ['adjustment', 'topup', 'topup'],
    );
    for (const item of page.items) {
      assert.match(item.id, /^\d+$/);
      assert.ok(!Number.isNaN(Date.parse(item.createdAt)));
      assert.deepEqual(Object.keys(item).sort(), [
        'amount',
        'balanceAfter',
        'createdAt',
        'description',
        'direction',
        'id',
        'kind',
        'reference',
      ]);
    }
  });

  it('pages with limit and offset, and caps limit at 100', BOUNDED, async () => {
    const all = ok(await get<Page>(world, 'listTransactions', {}, { token: user.accessToken }));
    const second = ok(
      await get<Page>(world, 'listTransactions', { limit: 1, offset: 1 }, { token: user.accessToken }),
    );
    assert.deepEqual(second.items, [all.items[1]]);
    assert.deepEqual([second.limit, second.offset, second.total], [1, 1, 3]);
    const beyond = ok(
      await get<Page>(world, 'listTransactions', { offset: 10 }, { token: user.accessToken }),
    );
    assert.deepEqual([beyond.items.length, beyond.total], [0, 3]);
    for (const query of [{ limit: 101 }, { limit: 0 }, { offset: -1 }, { sort: 'asc' }]) {
      const refused = failure(await get(world, 'listTransactions', query, { token: user.accessToken }));
      assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR'], JSON.stringify(query));
    }
  });

  it('shows another user only their own entries', BOUNDED, async () => {
    const page = ok(await get<Page>(world, 'listTransactions', {}, { token: other.accessToken }));
    assert.deepEqual(
      page.items.map((i) => [i.direction, i.amount, i.balanceAfter]),
      [['credit', 999, 999]],
    );
  });

  it('getTransaction returns one entry of the caller; another user’s id is 404', BOUNDED, async () => {
    const page = ok(await get<Page>(world, 'listTransactions', {}, { token: user.accessToken }));
    const first = page.items[0]!;
    assert.deepEqual(
      ok(await post<Item>(world, 'getTransaction', { id: first.id }, { token: user.accessToken })),
      first,
    );
    const foreign = failure(
      await post(world, 'getTransaction', { id: first.id }, { token: other.accessToken }),
    );
    assert.deepEqual([foreign.status, foreign.code], [404, 'NOT_FOUND']);
    for (const id of ['99999999999', '9223372036854775807', '9999999999999999999']) {
      const missing = failure(await post(world, 'getTransaction', { id }, { token: user.accessToken }));
      assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND'], id);
    }
    for (const id of ['abc', '0', '-1', '1.5', '']) {
      const bad = failure(await post(world, 'getTransaction', { id }, { token: user.accessToken }));
      assert.deepEqual([bad.status, bad.code], [400, 'VALIDATION_ERROR'], id);
    }
  });

  it('needs a bearer token', BOUNDED, async () => {
    assert.equal((await get(world, 'listTransactions')).status, 401);
    assert.equal((await post(world, 'getTransaction', { id: '1' })).status, 401);
  });
});
