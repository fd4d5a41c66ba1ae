import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nextLagosMidnight } from '../../src/lagos-time.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { advanceClock } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, failure, get, ok, post, signInAgain, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { mtn } from '../vtu/purchase-support.ts';
import { PIN, session, ussdUser } from './support.ts';

// getUssdSettings (API.md 17.6): what the app's Settings tells a person about the USSD channel comes
// from the service's configuration, not from the defaults, and what is left of today's USSD limit is
// the sum the payments are judged by: a purchase counts, a refunded failure gives its room back, and
// a new Africa/Lagos day starts from nothing.

type UssdSettings = {
  enabled: boolean;
  serviceCode: string;
  singleMax: number;
  dailyMax: number;
  usedToday: number;
  remainingToday: number;
};

describe(`getUssdSettings (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;

  before(async () => {
    // Every figure differs from the defaults (*384*2255#, N20,000, N100,000), kobo included.
    world = await createWorld({
      env: { USSD_SERVICE_CODE: '*347*88#', USSD_SINGLE_MAX: '1000.50', USSD_DAILY_MAX: '1500' },
    });
  });
  after(() => world?.close());

  const settingsOf = async (token: string) =>
    ok(await get<UssdSettings>(world, 'getUssdSettings', {}, { token }));

  it('tells the configured code and limits, and whether the person switched USSD on', async () => {
    const user = await userAtTier(world, 1, await kycUser(world, undefined, mtn('5')));
    assert.deepEqual(await settingsOf(user.accessToken), {
      enabled: false,
      serviceCode: '*347*88#',
      singleMax: 1000.5,
      dailyMax: 1500,
      usedToday: 0,
      remainingToday: 1500,
    });
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    ok(await post(world, 'setUssdEnabled', { enabled: true, pin: PIN }, { token: user.accessToken }));
    assert.equal((await settingsOf(user.accessToken)).enabled, true);
    ok(await post(world, 'setUssdEnabled', { enabled: false, pin: PIN }, { token: user.accessToken }));
    assert.equal((await settingsOf(user.accessToken)).enabled, false);
  });

  it('counts a USSD purchase toward today, and leaves what the next payment is refused over', async () => {
    const user = await ussdUser(world, 5000);
    const other = await ussdUser(world, 5000, '6');
    assert.match(
      (await session(world, user.phone, ['2', '1', '900', PIN])).at(-1)!.body,
      /^END Processing N900/,
    );
    const settings = await settingsOf(user.accessToken);
    assert.deepEqual([settings.usedToday, settings.remainingToday], [900, 600]);
    // The same room the payments are judged by: N700 is refused with N600 left.
    assert.match(
      (await session(world, user.phone, ['2', '1', '700', PIN])).at(-1)!.body,
      /^END That passes your USSD limit for today: N600 left\./,
    );
    assert.equal((await settingsOf(user.accessToken)).usedToday, 900, 'a refused payment uses nothing');
    // Another person's payments are theirs alone.
    assert.deepEqual(
      [(await settingsOf(other.accessToken)).usedToday, (await settingsOf(other.accessToken)).remainingToday],
      [0, 1500],
    );
  });

  it('gives a refunded failure’s room back', async () => {
    const user = await ussdUser(world, 5000);
    // A number ending in 1: the sandbox provider refuses it, and the purchase is refunded.
    const failing = await session(world, user.phone, ['2', '2', mtn('1'), '1', '800', PIN]);
    assert.match(failing.at(-1)!.body, /^END Processing N800/);
    const processing = await settingsOf(user.accessToken);
    assert.deepEqual(
      [processing.usedToday, processing.remainingToday],
      [800, 700],
      'counted while processing',
    );
    const [purchase] = ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        {},
        { token: user.accessToken },
      ),
    ).items;
    await world.ctx.modules.vtu.api.sendEnded(purchase!.id);
    await runDomainEvents(world);
    const after = await settingsOf(user.accessToken);
    assert.deepEqual([after.usedToday, after.remainingToday], [0, 1500]);
  });

  it('refuses a caller without a session: 401', async () => {
    const answer = failure(await get(world, 'getUssdSettings', {}));
    assert.deepEqual([answer.status, answer.code], [401, 'UNAUTHENTICATED']);
    const expired = failure(await get(world, 'getUssdSettings', {}, { token: 'not-a-token' }));
    assert.deepEqual([expired.status, expired.code], [401, 'UNAUTHENTICATED']);
  });

  // Last: it moves the world's clock to the next day.
  it('starts a new Africa/Lagos day from nothing', async () => {
    const user = await ussdUser(world, 5000, '7');
    assert.match(
      (await session(world, user.phone, ['2', '1', '1000', PIN])).at(-1)!.body,
      /^END Processing N1,000/,
    );
    assert.equal((await settingsOf(user.accessToken)).usedToday, 1000);
    const now = world.ctx.clock.now();
    await advanceClock(world, Math.ceil((nextLagosMidnight(now).getTime() - now.getTime()) / 1000) + 60);
    // The access token has expired by then: the same person signs in again.
    const again = await signInAgain(world, user.phone);
    const tomorrow = await settingsOf(again.accessToken);
    assert.deepEqual([tomorrow.usedToday, tomorrow.remainingToday], [0, 1500]);
  });
});
