import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { type ApiResponse, createWorld, type SignedIn, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { member, transferCall } from './support.ts';

// Races of wallet-to-wallet transfers. PGlite runs one transaction at a time, so there these prove
// the rules only in sequence; on PostgreSQL the requests overlap for real, split across two services
// on the same database (two processes' pools), where opposite transfers would deadlock unless both
// wallets are locked in the ledger's one order, and where a sender's balance and daily total hold
// only if they are read under the sender's wallet lock.

/** Two services on one database on PostgreSQL (another process's pool); the one world on PGlite. */
async function servicesWith(env: Record<string, string> = {}): Promise<World[]> {
  const world = await createWorld({ env });
  if (!onPostgres()) return [world];
  // The second service must run with the same limits as the first.
  return [world, await createWorld({ env, sameDatabaseAs: world })];
}

async function closeAll(worlds: World[]): Promise<void> {
  for (const world of worlds.slice().reverse()) await world.close();
}

/** `count` transfers at once, alternating between the services. */
function concurrently(
  worlds: World[],
  count: number,
  send: (world: World, i: number) => Promise<ApiResponse>,
): Promise<ApiResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => send(worlds[i % worlds.length]!, i)));
}

/** Any answer at or above 500 (a deadlock or serialisation error reaching a client), printed. */
function assertNoServerErrors(answers: ApiResponse[]): void {
  const failed = answers.filter((a) => a.status >= 500);
  for (const answer of failed) console.error(`${answer.status}: ${JSON.stringify(answer.body)}`);
  assert.deepEqual(
    failed.map((a) => `${a.status} ${JSON.stringify(a.body)}`),
    [],
    'no transfer may answer 5xx',
  );
}

async function transfersOf(world: World, sender: SignedIn): Promise<number> {
  const rows = await world.ctx.db
    .selectFrom('wallet_transfers')
    .select('id')
    .where('sender_id', '=', sender.userId)
    .execute();
  return rows.length;
}

describe(`transfer races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let worlds: World[];
  let world: World;
  before(async () => {
    worlds = await servicesWith();
    world = worlds[0]!;
  });
  after(() => closeAll(worlds));

  it('50 transfers A→B and 50 B→A at once: all answered 200, none deadlocks, both balances exact', async () => {
    // A sends 50 × ₦100, B 50 × ₦150: each is funded for all it sends, whatever arrives first.
    const a = await member(world, 2, 5_000);
    const b = await member(world, 2, 7_500);
    const answers = await concurrently(worlds, 100, (w, i) =>
      i % 2 === 0 ? transferCall(w, a, b, 100) : transferCall(w, b, a, 150),
    );
    assertNoServerErrors(answers);
    const refused = answers.filter((x) => x.status !== 200);
    assert.deepEqual(
      refused.map((x) => `${x.status} ${JSON.stringify(x.body)}`),
      [],
      'every transfer is accepted',
    );
    assert.equal(await walletKobo(world, a.userId), 500_000n - 500_000n + 750_000n);
    assert.equal(await walletKobo(world, b.userId), 750_000n - 750_000n + 500_000n);
    assert.deepEqual([await transfersOf(world, a), await transfersOf(world, b)], [50, 50]);
    await assertLedgerOk(world);
  });

  it('30 concurrent transfers against a balance for 3: exactly 3 move, 27 get 409', async () => {
    const sender = await member(world, 2, 300);
    const recipient = await member(world, 1);
    const answers = await concurrently(worlds, 30, (w) => transferCall(w, sender, recipient, 100));
    assertNoServerErrors(answers);
    assert.equal(answers.filter((x) => x.status === 200).length, 3);
    for (const answer of answers.filter((x) => x.status !== 200))
      expectError(answer, 409, 'INSUFFICIENT_FUNDS');
    assert.equal(await walletKobo(world, sender.userId), 0n);
    assert.equal(await walletKobo(world, recipient.userId), 30_000n);
    assert.equal(await transfersOf(world, sender), 3, 'a refused transfer leaves no row');
    await assertLedgerOk(world);
  });

  describe('against a daily total of ₦1,000', () => {
    let limited: World[];
    before(async () => {
      limited = await servicesWith({ TRANSFER_DAILY_MAX: '1000' });
    });
    after(() => closeAll(limited));

    it('20 concurrent ₦100 transfers with money to spare: exactly 10 move, 10 get 422', async () => {
      const first = limited[0]!;
      const sender = await member(first, 2, 5_000);
      const recipient = await member(first, 1);
      const answers = await concurrently(limited, 20, (w) => transferCall(w, sender, recipient, 100));
      assertNoServerErrors(answers);
      assert.equal(answers.filter((x) => x.status === 200).length, 10);
      for (const answer of answers.filter((x) => x.status !== 200)) {
        const error = expectError(answer, 422, 'ABOVE_MAXIMUM');
        assert.deepEqual([error.details?.limit, error.details?.remaining], [1_000, 0]);
      }
      assert.equal(await walletKobo(first, sender.userId), 400_000n);
      assert.equal(await walletKobo(first, recipient.userId), 100_000n);
      assert.equal(await transfersOf(first, sender), 10);
      await assertLedgerOk(first);
    });
  });
});
