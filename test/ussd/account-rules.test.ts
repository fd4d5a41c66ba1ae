import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { mtn } from '../vtu/purchase-support.ts';
import { PIN, session, ussdUser, walletKobo } from './support.ts';

// A USSD payment is held to the account's own rules exactly as the app's purchases are, because it
// goes through the same door (API.md 17.6: "Limits: 17.2"): the CBN tier's daily debit limit, counted
// once across both channels, and an operator's pause of the service.

describe(`USSD payments under the account's rules (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  let admin: SignedIn;
  before(async () => {
    world = await createWorld({
      env: {
        // Tier 1's daily debit limit at N1,000, under the USSD limits' defaults (N20,000, N100,000).
        LIMIT_TIER1_DAILY: '1000',
        PAUSES_REFRESH_MS: '100',
        ADMIN_PHONES: `+234${adminPhone.slice(1)}`,
      },
    });
    admin = await signIn(world, adminPhone);
  });
  after(() => world?.close());

  const purchases = async (user: SignedIn) =>
    ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        {},
        { token: user.accessToken },
      ),
    ).items;
  const lastScreen = async (user: SignedIn, amount: string) =>
    (await session(world, user.phone, ['2', '1', amount, PIN])).at(-1)!.body;

  it('counts USSD and app purchases toward one daily limit, and refuses past it with END, nothing debited', async () => {
    const user = await ussdUser(world, 5000);
    assert.match(await lastScreen(user, '600'), /^END Processing N600 MTN airtime/);
    ok(
      await post(
        world,
        'buyAirtime',
        { network: 'mtn', phone: mtn('5'), amount: 300, pin: PIN },
        { token: user.accessToken },
      ),
    );
    const before = await walletKobo(world, user.userId);
    assert.equal(
      await lastScreen(user, '200'),
      'END That passes your daily limit: N100 left today. Nothing was paid.',
    );
    assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
    const limits = ok(
      await get<{ dailyDebitUsed: number; dailyDebitRemaining: number }>(
        world,
        'getAccountLimits',
        {},
        { token: user.accessToken },
      ),
    );
    assert.deepEqual([limits.dailyDebitUsed, limits.dailyDebitRemaining], [900, 100]);
    assert.match(
      await lastScreen(user, '100'),
      /^END Processing N100 MTN airtime/,
      'what is left can be paid',
    );
  });

  it('refuses while an operator has paused the service, with END, nothing debited', async () => {
    const user = await ussdUser(world, 1000);
    ok(
      await post(
        world,
        'adminPauseService',
        { service: 'airtime', reason: 'provider incident' },
        { token: admin.accessToken },
      ),
    );
    try {
      assert.equal(
        await lastScreen(user, '100'),
        'END This service is paused for now. Please try again later. Nothing was paid.',
      );
      assert.equal(await walletKobo(world, user.userId), 100_000n);
      assert.equal((await purchases(user)).length, 0);
    } finally {
      ok(await post(world, 'adminResumeService', { service: 'airtime' }, { token: admin.accessToken }));
    }
  });
});
