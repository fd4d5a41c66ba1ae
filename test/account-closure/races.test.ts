import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userBalances } from '../../src/ledger/accounts.ts';
import { nairaToKobo } from '../../src/money.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type SignedIn, type World } from '../helpers/world.ts';
import { refreshed, sendsEnded } from '../schedules/support.ts';
import { advanceClock, bought, buyCall, buyer, mtn } from '../vtu/purchase-support.ts';
import { creditKobo, requestDeletion } from './support.ts';

// Closing an account against purchases at once (API.md 17.3, decision 0047). A request is decided
// under the person's wallet lock, which every purchase takes for its debit, and the closing job
// decides again under it at the effective time: whatever the interleaving, an account that closes
// has no money and no purchase still processing. PGlite runs one transaction at a time, so these
// prove it there only in sequence; on PostgreSQL two services on one database race for real.

const DAY = 24 * 60 * 60;
const people = 8;

describe(`closing an account against purchases (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  /** A second service on the same database (PostgreSQL): another API process. */
  let second: World;
  let chargeKobo: bigint;
  before(async () => {
    world = await createWorld();
    second = onPostgres() ? await createWorld({ sameDatabaseAs: world }) : world;
    // What ₦100 of airtime costs the wallet, so that a person's money is exactly some purchases.
    const probe = await buyer(world, 1_000);
    chargeKobo = nairaToKobo(
      (await bought(world, probe, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 })).amount,
    );
  });
  after(async () => {
    if (second !== world) await second?.close();
    await world?.close();
  });

  const airtime = (on: World, user: SignedIn, last: string) =>
    buyCall(on, user, 'buyAirtime', { network: 'mtn', phone: mtn(last), amount: 100 });

  /** Every account of these people that closed has no money and no purchase still processing. */
  async function assertClosedAreEmpty(users: readonly SignedIn[]): Promise<number> {
    let closed = 0;
    for (const user of users) {
      const closure = await world.ctx.db
        .selectFrom('account_closures')
        .select('status')
        .where('user_id', '=', user.userId)
        .where('status', '=', 'closed')
        .executeTakeFirst();
      if (closure === undefined) continue;
      closed++;
      const balances = await userBalances(world.ctx.db, user.userId);
      assert.deepEqual([balances.wallet, balances.wallet_held], [0n, 0n], 'a closed account holds no money');
      const processing = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select('id')
        .where('user_id', '=', user.userId)
        .where('status', '=', 'processing')
        .execute();
      assert.equal(processing.length, 0, 'a closed account has no purchase processing');
    }
    return closed;
  }

  it('requests at once with purchases that spend the wallet: a closed account never keeps money or a processing purchase', async () => {
    const users = await Promise.all(Array.from({ length: people }, () => buyer(world, 0)));
    await Promise.all(users.map((user) => creditKobo(world, user.userId, chargeKobo * 3n)));
    const answers = await Promise.all(
      users.flatMap((user, i) => [
        airtime(world, user, '5'),
        requestDeletion(i % 2 === 0 ? second : world, user),
        airtime(second, user, '5'),
        // Half the people's last purchase stays processing (the sandbox's pending), half succeeds.
        airtime(world, user, i % 2 === 0 ? '2' : '5'),
        requestDeletion(i % 2 === 0 ? world : second, user),
      ]),
    );
    for (const answer of answers) {
      assert.ok([200, 409].includes(answer.status), `an answer of the contract: ${answer.status}`);
    }
    for (const user of users) await sendsEnded(world, user);
    await Promise.all(users.map((user) => sendsEnded(second, user)));
    // Asked again once the purchases were answered: accepted exactly where nothing is left to wait for.
    for (const user of users) {
      const { wallet } = await userBalances(world.ctx.db, user.userId);
      const processing = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select('id')
        .where('user_id', '=', user.userId)
        .where('status', '=', 'processing')
        .execute();
      const expected = wallet === 0n && processing.length === 0 ? 200 : 409;
      assert.equal((await requestDeletion(world, user)).status, expected);
    }

    // The effective time, with a purchase of each person racing the closing job on the other process.
    world.ctx.sandboxClock!.advance(7 * DAY);
    const later = await Promise.all(users.map((user) => refreshed(world, user)));
    await Promise.all([...later.map((user) => airtime(world, user, '2')), advanceClock(second, 60)]);
    await advanceClock(world, 60);
    await assertClosedAreEmpty(users);
    await assertLedgerOk(world);
  });

  it('at the effective time, purchases spending money that came in race the closing job: it closes only an empty account', async () => {
    const users = await Promise.all(Array.from({ length: people }, () => buyer(world, 0)));
    for (const user of users) assert.equal((await requestDeletion(world, user)).status, 200);
    // Money comes in while they wait; at the effective time each spends it as the job runs.
    await Promise.all(users.map((user) => creditKobo(world, user.userId, chargeKobo)));
    world.ctx.sandboxClock!.advance(7 * DAY);
    const later = await Promise.all(users.map((user) => refreshed(world, user)));
    await Promise.all([
      ...later.map((user, i) => airtime(i % 2 === 0 ? second : world, user, i % 4 < 2 ? '5' : '2')),
      advanceClock(second, 60),
      advanceClock(world, 60),
    ]);
    for (const user of users) await sendsEnded(world, user);
    await Promise.all(users.map((user) => sendsEnded(second, user)));
    await assertClosedAreEmpty(users);
    await assertLedgerOk(world);
  });
});
