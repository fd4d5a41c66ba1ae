import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import {
  isShardedAccount,
  logicalAccount,
  openLedgerShards,
  providerFloatAccount,
  shardAccount,
  systemAccounts,
  systemBalance,
  systemBalances,
} from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { accountMovement } from '../../src/ledger/history.ts';
import {
  type PostingRequest,
  post,
  postBatch,
  ReferenceConflictError,
  type ShardOptions,
} from '../../src/ledger/postings.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createUser,
  entriesOf,
  type LedgerDatabase,
  now,
  openLedgerDatabase,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

// The hot system accounts kept in K rows (decision 0050): a transaction posts every hot account of
// its postings to one shard it draws, readers sum the shards, and a replayed reference is the same
// content whichever shard its transaction drew.

const { collectionsPool, vtuInFlight, revenueMarkup } = systemAccounts;
const dataFloat = providerFloatAccount('data');
const hot = [collectionsPool, vtuInFlight, revenueMarkup, dataFloat];
const eight: ShardOptions = { shards: 8 };

/** A purchase's acceptance: the wallet into vtu_in_flight. */
const debit = (userId: string, amount: bigint): PostingRequest =>
  transfer(uniqueReference('vtu_debit'), wallet(userId), vtuInFlight, amount, 'airtime');

/** A purchase's settlement: vtu_in_flight to the provider's float (wholesale) and revenue (markup). */
const settlement = (amount: bigint, markup: bigint): PostingRequest => ({
  reference: uniqueReference('vtu_settle'),
  description: 'airtime delivered',
  entries: [
    { account: vtuInFlight, amount: -amount },
    { account: dataFloat, amount: amount - markup },
    // As the settlement writes it: no revenue entry without a markup.
    ...(markup > 0n ? [{ account: revenueMarkup, amount: markup }] : []),
  ],
});

/** Every row of each hot account, by its code: what each shard holds. */
async function shardRows(db: Kysely<DB>): Promise<Map<string, bigint>> {
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['code', 'balance'])
    .where('kind', '=', 'system')
    .execute();
  return new Map(rows.filter((r) => hot.includes(logicalAccount(r.code))).map((r) => [r.code, r.balance]));
}

/** The shard (0 for the account's own row) of each hot-account entry a reference made. */
async function shardsOf(db: Kysely<DB>, reference: string): Promise<number[]> {
  const entries = await entriesOf(db, reference);
  return entries
    .filter((e) => isShardedAccount(logicalAccount(e.account)))
    .map((e) => (e.account.includes('#') ? Number(e.account.split('#')[1]) : 0));
}

describe('ledger shards of the hot system accounts', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  const topUp = (userId: string, amount: bigint, options: ShardOptions = eight) =>
    post(
      ledger.db,
      transfer(uniqueReference('top'), collectionsPool, wallet(userId), amount),
      now(),
      options,
    );

  it('opens shards 1 to 7 of every hot account in the migration, and no shard of the others', async () => {
    const codes = new Set(
      (await ledger.db.selectFrom('ledger_accounts').select('code').execute()).map((r) => r.code),
    );
    for (const code of [...hot, providerFloatAccount('bills'), providerFloatAccount('social')]) {
      for (let shard = 0; shard < 8; shard += 1)
        assert.ok(codes.has(shardAccount(code, shard)), `${code} #${shard}`);
      assert.ok(!codes.has(`${code}#8`));
    }
    for (const code of [
      systemAccounts.revenuePenalty,
      systemAccounts.expenseRewards,
      systemAccounts.adjustments,
    ]) {
      assert.equal(shardAccount(code, 3), code, 'a cold account is one row');
      assert.ok(!codes.has(`${code}#1`));
    }
  });

  it('sums the shards to the logical balance after many postings at K=8, spread over several shards', async () => {
    const user = await createUser(ledger.db);
    const before = await systemBalances(ledger.db, hot);
    await topUp(user, 1_000_000n);
    let accepted = 0n;
    let settled = 0n;
    let markups = 0n;
    for (let round = 0; round < 40; round += 1) {
      const debits = Array.from({ length: 5 }, (_, i) => debit(user, BigInt(100 + round * 5 + i)));
      const results = await ledger.db.transaction().execute((trx) => postBatch(trx, debits, now(), eight));
      for (const r of results) assert.equal(r.status, 'fulfilled');
      accepted += debits.reduce((sum, d) => sum + d.entries[1]!.amount, 0n);
      const amount = BigInt(100 + round);
      const markup = BigInt(round % 7);
      const [done] = await ledger.db
        .transaction()
        .execute((trx) => postBatch(trx, [settlement(amount, markup)], now(), eight));
      assert.equal(done!.status, 'fulfilled');
      settled += amount;
      markups += markup;
    }
    const after = await systemBalances(ledger.db, hot);
    assert.equal(after.get(collectionsPool)! - before.get(collectionsPool)!, -1_000_000n);
    assert.equal(after.get(vtuInFlight)! - before.get(vtuInFlight)!, accepted - settled);
    assert.equal(after.get(revenueMarkup)! - before.get(revenueMarkup)!, markups);
    assert.equal(after.get(dataFloat)! - before.get(dataFloat)!, settled - markups);
    assert.equal(
      await systemBalance(ledger.db, `${vtuInFlight}#3`),
      after.get(vtuInFlight),
      'a shard reads as its account',
    );

    // The sum of the rows is the account's; the rows themselves differ: the postings were spread.
    const rows = await shardRows(ledger.db);
    for (const code of hot) {
      const sum = [...rows].filter(([c]) => logicalAccount(c) === code).reduce((s, [, b]) => s + b, 0n);
      assert.equal(sum, after.get(code), code);
    }
    const used = [...rows].filter(([c, b]) => logicalAccount(c) === vtuInFlight && b !== 0n);
    assert.ok(used.length > 1, 'vtu_in_flight moved on more than one shard');
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('lands every hot entry of a transaction on one shard, whatever the batch', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 100_000n);
    const drawn = new Set<number>();
    for (let round = 0; round < 24; round += 1) {
      const requests = [debit(user, 100n), settlement(300n, 20n), debit(user, 50n), settlement(70n, 0n)];
      await ledger.db.transaction().execute((trx) => postBatch(trx, requests, now(), eight));
      const shards = (await Promise.all(requests.map((r) => shardsOf(ledger.db, r.reference)))).flat();
      assert.equal(shards.length, 1 + 3 + 1 + 2, 'one entry per hot account per posting');
      assert.equal(new Set(shards).size, 1, `one shard per transaction, got ${shards.join(',')}`);
      drawn.add(shards[0]!);
    }
    assert.ok(drawn.size > 1, 'transactions draw different shards');
    for (const shard of drawn) assert.ok(shard >= 0 && shard < 8);
  });

  it('answers a replayed reference created: false on whichever shard its transaction drew', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 10_000n);
    const request = debit(user, 1_234n);
    const first = await post(ledger.db, request, now(), eight);
    assert.equal(first.created, true);
    const [firstShard] = await shardsOf(ledger.db, request.reference);
    // Twenty replays, each drawing its own shard (all on the first's: 1 in 8^20), and one batch.
    for (let i = 0; i < 20; i += 1) {
      const again = await post(ledger.db, request, now(), eight);
      assert.deepEqual(again, { id: first.id, reference: request.reference, created: false });
    }
    const [batched] = await ledger.db.transaction().execute((trx) => postBatch(trx, [request], now(), eight));
    assert.deepEqual(batched, { status: 'fulfilled', value: { ...first, created: false } });
    // Naming another shard outright is still the same content; another amount is not.
    const otherShard = ((firstShard ?? 0) + 3) % 8;
    const named = {
      ...request,
      entries: [request.entries[0]!, { account: shardAccount(vtuInFlight, otherShard), amount: 1_234n }],
    };
    assert.equal((await post(ledger.db, named, now(), eight)).created, false);
    const otherAmount = transfer(request.reference, wallet(user), vtuInFlight, 1_235n, request.description);
    await assert.rejects(post(ledger.db, otherAmount, now(), eight), ReferenceConflictError);
    assert.deepEqual(await shardsOf(ledger.db, request.reference), [firstShard], 'nothing more was written');
  });

  it('writes only shard 0 at K=1, and when no shard count is given', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 50_000n, { shards: 1 });
    const references: string[] = [];
    for (let i = 0; i < 20; i += 1) {
      const requests = [debit(user, 10n), settlement(10n, 1n)];
      await ledger.db
        .transaction()
        .execute((trx) => postBatch(trx, requests, now(), i % 2 === 0 ? { shards: 1 } : {}));
      references.push(...requests.map((r) => r.reference));
    }
    for (const reference of references) {
      for (const e of await entriesOf(ledger.db, reference)) assert.ok(!e.account.includes('#'), e.account);
    }
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('reads one posting of a hot account on whichever shard it moved', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 5_000n);
    const request = debit(user, 777n);
    await post(ledger.db, request, now(), eight);
    const movement = await accountMovement(ledger.db, vtuInFlight, request.reference);
    assert.equal(movement?.amount, 777n);
  });

  it('opens the shards LEDGER_SHARDS asks for at start-up, idempotently, for a float opened later', async () => {
    await ledger.db
      .insertInto('ledger_accounts')
      .values({ code: providerFloatAccount('later'), kind: 'system', created_at: now() })
      .execute();
    await openLedgerShards(ledger.db, 12, now());
    await openLedgerShards(ledger.db, 12, now());
    await openLedgerShards(ledger.db, 1, now());
    const codes = new Set(
      (await ledger.db.selectFrom('ledger_accounts').select('code').execute()).map((r) => r.code),
    );
    for (const code of [...hot, providerFloatAccount('later')]) {
      for (let shard = 1; shard < 12; shard += 1)
        assert.ok(codes.has(`${code}#${shard}`), `${code}#${shard}`);
      assert.ok(!codes.has(`${code}#12`));
    }
    assert.ok(!codes.has(`${systemAccounts.revenuePenalty}#1`));
    assert.ok(![...codes].some((code) => code.includes('#1#')), 'no shard of a shard');
    // Postings at K=12 use them.
    const user = await createUser(ledger.db);
    await topUp(user, 1_000n, { shards: 12 });
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });
});

describe('ledger shards under concurrent purchases', {
  skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite runs one transaction at a time',
}, () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  it('ends balanced, with no deadlock, after concurrent acceptance and settlement batches at K=8', async () => {
    const clients = 24;
    const rounds = 10;
    const batchSize = 20;
    const users = await Promise.all(Array.from({ length: clients }, () => createUser(ledger.db)));
    // Funded concurrently too: credits from collections_pool race each other.
    await Promise.all(
      users.map((u) =>
        post(
          ledger.db,
          transfer(uniqueReference('top'), collectionsPool, wallet(u), 1_000_000n),
          now(),
          eight,
        ),
      ),
    );
    const before = await systemBalances(ledger.db, hot);
    const client = async (userId: string) => {
      let moved = 0n;
      for (let round = 0; round < rounds; round += 1) {
        const debits = Array.from({ length: batchSize }, () => debit(userId, 100n));
        const accepted = await ledger.db.transaction().execute((trx) => postBatch(trx, debits, now(), eight));
        assert.ok(accepted.every((r) => r.status === 'fulfilled'));
        const settlements = Array.from({ length: batchSize }, () => settlement(100n, 10n));
        const settledBatch = await ledger.db
          .transaction()
          .execute((trx) => postBatch(trx, settlements, now(), { ...eight, referencesUnposted: true }));
        assert.ok(settledBatch.every((r) => r.status === 'fulfilled'));
        moved += 100n * BigInt(batchSize);
      }
      return moved;
    };
    const moved = (await Promise.all(users.map(client))).reduce((s, m) => s + m, 0n);
    const after = await systemBalances(ledger.db, hot);
    assert.equal(after.get(vtuInFlight), before.get(vtuInFlight), 'every acceptance settled');
    assert.equal(after.get(revenueMarkup)! - before.get(revenueMarkup)!, moved / 10n);
    assert.equal(after.get(dataFloat)! - before.get(dataFloat)!, moved - moved / 10n);
    const check = await checkLedger(ledger.db);
    assert.deepEqual(check.imbalances, []);
    assert.equal(check.ok, true);
  });
});
