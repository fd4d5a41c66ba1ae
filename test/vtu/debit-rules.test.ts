import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { AppError } from '../../src/errors.ts';
import { nairaToKobo } from '../../src/money.ts';
import type { DebitRule } from '../../src/vtu/debit-rules.ts';
import { walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, ok, signInAgain, type World } from '../helpers/world.ts';
import { buyCall, buyer, mtn, recordedPurchases } from './purchase-support.ts';

// The template for a purchase rule that needs state at debit time (src/vtu/debit-rules.ts;
// CONTRIBUTING.md, "Add a purchase rule"). Copy it for a new rule: the rule below (at most three
// purchases per user per Lagos day) stands in for a daily amount limit or a velocity limit. What
// every such rule must show: the limit holds when a user's purchases race (on PostgreSQL, where
// they really do), a refused purchase is charged and recorded nothing, and the answer is the
// contract's error.

const purchasesPerDayMax = 3;

/** Midnight in Lagos (UTC+1, no daylight saving) on or before `now`. */
const lagosDayStart = (now: Date): Date => {
  const lagos = new Date(now.getTime() + 60 * 60 * 1000);
  return new Date(Date.UTC(lagos.getUTCFullYear(), lagos.getUTCMonth(), lagos.getUTCDate()) - 60 * 60 * 1000);
};

const purchasesPerDay: DebitRule = {
  name: 'purchases per Lagos day',
  async load(trx, buyerIds, now) {
    // One statement for the whole batch, under the buyers' wallet locks: a purchase of the same
    // user committed by another batch is counted here.
    const { rows } = await sql<{ user_id: string; n: string }>`
      select user_id, count(*)::text as n from vtu_transactions
      where user_id = any(${buyerIds}::uuid[]) and created_at >= ${lagosDayStart(now)}::timestamptz
      group by user_id`.execute(trx);
    const today = new Map(rows.map((row) => [row.user_id, Number(row.n)]));
    return (purchase) => {
      const count = today.get(purchase.userId) ?? 0;
      if (count >= purchasesPerDayMax) {
        return new AppError('ABOVE_MAXIMUM', `at most ${purchasesPerDayMax} purchases a day`, {
          details: { limit: purchasesPerDayMax },
        });
      }
      // Admitted: counted, so the next purchase of the same batch sees it.
      today.set(purchase.userId, count + 1);
      return null;
    };
  },
};

describe(`a purchase rule decided at debit time (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({ debitRules: [purchasesPerDay] });
  });
  after(() => world?.close());

  it('holds under racing purchases of one user: the rest refused with the contract error, charged nothing', async () => {
    const user = await buyer(world, 10_000);
    const before = await walletKobo(world, user.userId);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 200).map((a) => ok(a));
    assert.equal(accepted.length, purchasesPerDayMax);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      const error = failure(refused);
      assert.deepEqual([error.status, error.code, error.details], [422, 'ABOVE_MAXIMUM', { limit: 3 }]);
    }
    await world.ctx.modules.vtu.api.drained();
    const charged = accepted.reduce((sum, a) => sum + nairaToKobo(a.amount), 0n);
    assert.equal(await walletKobo(world, user.userId), before - charged, 'refused purchases charged nothing');
    assert.equal(
      await recordedPurchases(world, user.userId),
      purchasesPerDayMax,
      'refused purchases recorded nothing',
    );

    // Another user is not held back by this one's purchases.
    const other = await buyer(world, 1_000);
    ok(await buyCall(world, other, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }));
  });

  it("holds when two services on one database take the same user's purchases at once", {
    skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): two services cannot share a PGlite',
  }, async () => {
    // Within one service the acceptance batches run one at a time; across services only the
    // wallet lock orders them, which is what this shows.
    const second = await createWorld({ debitRules: [purchasesPerDay], sameDatabaseAs: world });
    try {
      const user = await buyer(world, 10_000);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          buyCall(i % 2 === 0 ? world : second, user, 'buyAirtime', {
            network: 'mtn',
            phone: mtn('5'),
            amount: 100,
          }),
        ),
      );
      assert.equal(answers.filter((a) => a.status === 200).length, purchasesPerDayMax);
      assert.deepEqual(
        new Set(answers.filter((a) => a.status !== 200).map((a) => failure(a).code)),
        new Set(['ABOVE_MAXIMUM']),
      );
      await second.ctx.modules.vtu.api.drained();
      await world.ctx.modules.vtu.api.drained();
    } finally {
      await second.close();
    }
  });

  it('counts per Lagos day: the next day buys again', async () => {
    const user = await buyer(world, 10_000);
    for (let i = 0; i < purchasesPerDayMax; i++) {
      ok(await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }));
    }
    assert.equal(
      failure(await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }))
        .code,
      'ABOVE_MAXIMUM',
    );
    world.ctx.sandboxClock!.advance(24 * 60 * 60);
    // A day later the access token has expired too: the user signs in again.
    const tomorrow = await signInAgain(world, user.phone);
    ok(await buyCall(world, tomorrow, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }));
    await world.ctx.modules.vtu.api.drained();
  });
});
