import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { payByUssd, ussdPaymentRecorder } from '../../src/ussd/payments.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import { createWorld, get, ok, type World } from '../helpers/world.ts';
import { type Answer, dial, PIN, session, ussdUser, walletKobo } from './support.ts';

// A gateway repeats a callback it got no answer to, and two sessions of one person may pay at once.
// The step's claim, the purchase's derived reference and the USSD day's sum under the wallet's lock
// keep each to one purchase and the day to its limit. PGlite runs one transaction at a time, so these
// prove something only on PostgreSQL (CONTRIBUTING.md, "Test rules"); they run on both.

describe(`USSD payments racing (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { USSD_DAILY_MAX: '1500' } });
  });
  after(() => world?.close());

  const randomSession = () => `ATUid_${randomUUID().replaceAll('-', '')}`;
  const purchases = async (token: string) =>
    ok(await get<{ items: VtuTransactionView[] }>(world, 'listMyVtuTransactions', {}, { token })).items;

  it('buys once for 10 identical payment callbacks at once, every answer the same END and reference', async () => {
    const user = await ussdUser(world, 2000);
    const sessionId = randomSession();
    const choices = ['2', '1', '500'];
    await session(world, user.phone, choices, { sessionId });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        dial(world, { phone: user.phone, sessionId, inputs: [...choices, PIN] }),
      ),
    );
    const bodies = new Set(answers.map((answer: Answer) => answer.body));
    assert.equal(bodies.size, 1, `one answer for all: ${[...bodies].join(' | ')}`);
    const [body] = bodies;
    assert.match(
      body!,
      /^END Processing N500 MTN airtime to \d{11}\. Ref \w+\. The result will be in your billrail app\.$/,
    );
    const bought = await purchases(user.accessToken);
    assert.equal(bought.length, 1, 'one purchase');
    assert.ok(body!.includes(`Ref ${bought[0]!.reference}.`));
    assert.equal(await walletKobo(world, user.userId), 150_000n, 'one debit');
  });

  it('answers a repeat that raced past the step’s claim as the first, the reference buying once', async () => {
    const user = await ussdUser(world, 2000);
    const vtu = world.ctx.modules.vtu.api;
    const request = {
      userId: user.userId,
      gateway: 'africastalking',
      sessionId: randomSession(),
      startedAt: world.ctx.clock.now(),
      payment: {
        service: 'airtime' as const,
        fields: { network: 'mtn' as const, phone: `+234${user.phone.slice(1)}`, amount: 300 },
        what: `N300 MTN airtime to ${user.phone}`,
      },
      pin: PIN,
      choices: ['2', '1', '300'],
      now: world.ctx.clock.now(),
    };
    const deps = {
      db: world.ctx.db,
      pepper: world.ctx.config.secrets.pepper,
      vtu,
      limits: { singleMaxKobo: 2_000_000n, dailyMaxKobo: 10_000_000n },
      recordPayments: ussdPaymentRecorder(world.ctx.modules.auth.api.ussdEnabledAmong),
    };
    const screens = await Promise.all(Array.from({ length: 5 }, () => payByUssd(deps, request)));
    assert.equal(
      new Set(screens.map((screen) => `${screen.type} ${screen.text}`)).size,
      1,
      JSON.stringify(screens),
    );
    assert.equal(screens[0]!.type, 'END');
    assert.match(screens[0]!.text, /^Processing N300 MTN airtime/);
    assert.equal((await purchases(user.accessToken)).length, 1);
    assert.equal(await walletKobo(world, user.userId), 170_000n);
  });

  it('accepts no payment once USSD is switched off, not even one that read it on', {
    skip: onPostgres() ? false : 'needs DATABASE_URL: the switch-off is held open on a second connection',
  }, async () => {
    const user = await ussdUser(world, 2000);
    const sessionId = randomSession();
    const choices = ['2', '1', '500'];
    await session(world, user.phone, choices, { sessionId });
    // The person switches USSD off; its UPDATE is held uncommitted while the gateway sends the PIN.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let switching!: () => void;
    const switched = new Promise<void>((resolve) => {
      switching = resolve;
    });
    const switchOff = world.ctx.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ ussd_enabled: false }).where('id', '=', user.userId).execute();
      switching();
      await held;
    });
    try {
      await switched;
      // The step's own check reads the row as last committed (on): the payment goes on and meets the lock.
      const paying = dial(world, { phone: user.phone, sessionId, inputs: [...choices, PIN] });
      await until(async () => {
        const { rows } = await sql<{ waiting: string }>`
          select count(*) as waiting from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`.execute(world.ctx.db);
        return Number(rows[0]!.waiting) > 0;
      }, 'the payment waiting for the switch-off');
      release();
      await switchOff;
      const answer = await paying;
      assert.equal(
        answer.body,
        'END USSD is off for your account. Switch on USSD in the billrail app: Settings.',
      );
      assert.equal((await purchases(user.accessToken)).length, 0, 'nothing bought');
      assert.equal(await walletKobo(world, user.userId), 200_000n, 'nothing debited');
    } finally {
      release();
      await switchOff.catch(() => undefined);
    }
  });

  it('lets only one of two sessions paying at once pass USSD_DAILY_MAX', async () => {
    const user = await ussdUser(world, 5000);
    const sessions = [randomSession(), randomSession()];
    const choices = ['2', '1', '900'];
    for (const sessionId of sessions) await session(world, user.phone, choices, { sessionId });
    const answers = await Promise.all(
      sessions.map((sessionId) => dial(world, { phone: user.phone, sessionId, inputs: [...choices, PIN] })),
    );
    const ends = answers.map((answer) => answer.body).sort();
    assert.match(ends[0]!, /^END Processing N900/);
    assert.equal(
      ends[1],
      'END That passes your USSD limit for today: N600 left. Use the app for more. Nothing was paid.',
    );
    assert.equal((await purchases(user.accessToken)).length, 1);
    assert.equal(await walletKobo(world, user.userId), 410_000n, 'one debit of N900');
  });
});
