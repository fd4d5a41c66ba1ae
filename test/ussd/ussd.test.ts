import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/context.ts';
import { notificationPushJob } from '../../src/notifications/jobs.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { mtn } from '../vtu/purchase-support.ts';
import { type Answer, callbackUrl, dial, PIN, session, ussdUser, walletKobo } from './support.ts';

// The USSD channel of API.md 17.6 through its callback, as Africa's Talking calls it: who may use it,
// the menu (balance, airtime for this phone and another, data five plans to a screen, the last three
// transactions, 0 back), and payments through the purchases' own door: the PIN's lockout shared with
// the app, the USSD limits, the purchase in the app's history and inbox, and nothing of the PIN, the
// inputs or the callback's token in the log.

describe(`the USSD channel (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  let admin: SignedIn;
  const lines: string[] = [];
  const logged = () => lines.join('\n');

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    world = await createWorld({
      logger: createLogger({ logLevel: 'info' }, sink),
      env: {
        USSD_SINGLE_MAX: '1000',
        USSD_DAILY_MAX: '1500',
        USSD_ALLOWED_IPS: '127.0.0.1,::1',
        ADMIN_PHONES: `+234${adminPhone.slice(1)}`,
      },
    });
    admin = await signIn(world, adminPhone);
  });
  after(() => world?.close());

  const randomSession = () => `ATUid_${randomUUID().replaceAll('-', '')}`;
  const screens = (answers: Answer[]) => answers.map((a) => `${a.type} ${a.screen}`);

  it('answers a wrong token with the ordinary 404, and a right one in plain text', async () => {
    const user = await ussdUser(world, 0);
    const wrong = await dial(world, {
      phone: user.phone,
      sessionId: 'ATUid_1',
      inputs: [],
      token: 'x'.repeat(32),
    });
    assert.equal(wrong.status, 404);
    const envelope = JSON.parse(wrong.body) as { success: boolean; error: { code: string } };
    assert.deepEqual([envelope.success, envelope.error.code], [false, 'NOT_FOUND']);
    const right = await dial(world, { phone: user.phone, sessionId: 'ATUid_1', inputs: [] });
    assert.equal(right.status, 200);
    assert.equal(right.type, 'CON');
    assert.match(right.screen, /1 Balance\n2 Airtime\n3 Data\n4 Last 3 transactions/);
  });

  it('answers END with the balance', async () => {
    const user = await ussdUser(world, 1234.5);
    const answers = await session(world, user.phone, ['1']);
    assert.deepEqual(screens(answers).slice(1), ['END Your billrail balance is N1,234.50.']);
  });

  it('buys airtime for this phone through the purchases, in the app’s history, inbox and push, never by SMS', async () => {
    const user = await ussdUser(world, 2000);
    // A device at the sandbox's push service, saved as the web client saves it.
    const subscribed = await fetch(`${world.baseUrl}/__sandbox/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const device = (
      (await subscribed.json()) as { data: { endpoint: string; keys: { p256dh: string; auth: string } } }
    ).data;
    ok(
      await post(
        world,
        'savePushSubscription',
        { endpoint: device.endpoint, p256dh: device.keys.p256dh, auth: device.keys.auth },
        { token: user.accessToken },
      ),
    );
    const smsBefore = world.ctx.sandbox?.state.lastSms.get(`+234${user.phone.slice(1)}`);
    const answers = await session(world, user.phone, ['2', '1', '500', PIN]);
    const end = answers.at(-1)!;
    assert.equal(end.type, 'END');
    const reference = /Ref (\w+)\./.exec(end.screen)?.[1];
    assert.ok(reference !== undefined, end.screen);
    assert.equal(
      end.screen,
      `Processing N500 MTN airtime to ${user.phone}. Ref ${reference}. The result will be in your billrail app.`,
    );
    assert.equal(await walletKobo(world, user.userId), 150_000n, 'N500 debited once');
    const { items } = ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        {},
        { token: user.accessToken },
      ),
    );
    assert.equal(items.length, 1);
    assert.equal(items[0]!.reference, reference);
    await world.ctx.modules.vtu.api.sendEnded(items[0]!.id);
    await runDomainEvents(world);
    const pushes = await runQueuedJobs(world, notificationPushJob);
    assert.deepEqual(pushes.failed, []);
    const pushed = await fetch(
      `${world.baseUrl}/__sandbox/push?endpoint=${encodeURIComponent(device.endpoint)}`,
    );
    const received = (
      (await pushed.json()) as { data: { items: Array<{ payload: { notificationId?: string } | null }> } }
    ).data.items.map((item) => item.payload?.notificationId);
    const inbox = ok(
      await get<{ items: Array<{ id: string; kind: string; title: string; body: string }> }>(
        world,
        'listNotifications',
        {},
        { token: user.accessToken },
      ),
    );
    const entry = inbox.items.find((item) => item.kind === 'purchase_succeeded');
    assert.ok(entry !== undefined, `the outcome reached the inbox: ${JSON.stringify(inbox.items)}`);
    assert.match(entry.body, /airtime/i);
    assert.ok(received.includes(entry.id), 'the same entry was pushed to the device');
    assert.equal(world.ctx.sandbox?.state.lastSms.get(`+234${user.phone.slice(1)}`), smsBefore, 'no SMS');
    console.log(`A whole session:\n${answers.map((a, i) => `[${i}] ${a.body}`).join('\n')}`);
  });

  it('turns away, with what to do in the app: an unknown number, USSD off, below Tier 1, no PIN, frozen', async () => {
    const first = async (phone: string) =>
      (await dial(world, { phone, sessionId: randomSession(), inputs: [] })).body;
    assert.equal(
      await first(mtn('5')),
      'END This number has no billrail account. Sign up in the billrail app with this number first.',
    );
    const off = await signIn(world, mtn('5'));
    assert.equal(
      await first(off.phone),
      'END USSD is off for your account. Switch on USSD in the billrail app: Settings.',
    );

    const tier0 = await signIn(world, mtn('5'));
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: tier0.accessToken }));
    ok(await post(world, 'setUssdEnabled', { enabled: true, pin: PIN }, { token: tier0.accessToken }));
    assert.equal(
      await first(tier0.phone),
      'END Verify your identity (Tier 1) in the billrail app before paying by USSD.',
    );

    // No PIN: the switch itself needs one, so only a PIN removed by hand would leave the channel on
    // without it; the channel says so all the same.
    const noPin = await ussdUser(world, 0);
    await world.ctx.db.updateTable('users').set({ pin_hash: null }).where('id', '=', noPin.userId).execute();
    assert.equal(
      await first(noPin.phone),
      'END Set a transaction PIN in the billrail app: Settings, then dial again.',
    );

    const frozen = await ussdUser(world, 100);
    ok(
      await post(
        world,
        'adminFreezeUser',
        { userId: frozen.userId, reason: 'suspected card fraud, case 4411' },
        { token: admin.accessToken },
      ),
    );
    assert.equal(
      await first(frozen.phone),
      'END Your account is frozen: nothing can be paid from it. Contact support in the billrail app.',
    );
  });

  it('switches USSD on and off with the PIN (getMe says which), off from the next callback', async () => {
    const user = await ussdUser(world, 100);
    const me = async () =>
      ok(await get<{ ussdEnabled: boolean }>(world, 'getMe', {}, { token: user.accessToken }));
    assert.equal((await me()).ussdEnabled, true);
    const sessionId = randomSession();
    assert.equal((await dial(world, { phone: user.phone, sessionId, inputs: [] })).type, 'CON');
    const wrong = failure(
      await post(world, 'setUssdEnabled', { enabled: false, pin: '0000' }, { token: user.accessToken }),
    );
    assert.deepEqual([wrong.status, wrong.code], [403, 'INVALID_PIN']);
    assert.equal((await me()).ussdEnabled, true, 'a wrong PIN changes nothing');
    assert.deepEqual(
      ok(await post(world, 'setUssdEnabled', { enabled: false, pin: PIN }, { token: user.accessToken })),
      { ussdEnabled: false },
    );
    assert.equal((await me()).ussdEnabled, false);
    const next = await dial(world, { phone: user.phone, sessionId, inputs: ['1'] });
    assert.equal(
      next.body,
      'END USSD is off for your account. Switch on USSD in the billrail app: Settings.',
    );
    const fresh = await signIn(world);
    assert.equal(
      ok(await get<{ ussdEnabled: boolean }>(world, 'getMe', {}, { token: fresh.accessToken })).ussdEnabled,
      false,
      'off by default',
    );
  });

  it('goes back with 0 where there is somewhere to go, and takes 0 as no amount', async () => {
    const user = await ussdUser(world, 100);
    const answers = await session(world, user.phone, ['2', '0', '3', '0', '2', '1', '0']);
    assert.deepEqual(
      answers.map((a) => a.screen.split('\n')[0]),
      [
        'billrail',
        'Airtime for:',
        'billrail',
        'Data network:',
        'billrail',
        'Airtime for:',
        'Enter the amount in naira, N50 to N1,000:',
        'Enter a whole amount from N50 to N1,000:',
      ],
    );
    const invalid = await session(world, user.phone, ['7']);
    assert.match(invalid[1]!.body, /^CON Invalid choice\.\nbillrail\n1 Balance/);
  });

  it('buys airtime for another number, refusing a number of another network before the amount and the PIN', async () => {
    const user = await ussdUser(world, 2000);
    const glo = `0805${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}5`;
    const mismatch = await session(world, user.phone, ['2', '2', glo, '1']);
    assert.equal(
      mismatch.at(-1)!.body,
      `END ${glo} is not on MTN. Nothing was paid. Dial again and choose its network.`,
    );
    const other = mtn('5');
    const answers = await session(world, user.phone, ['2', '2', '0801', other, '1', '200', PIN]);
    assert.deepEqual(
      answers.map((a) => a.screen.split('\n')[0]),
      [
        'billrail',
        'Airtime for:',
        'Enter the phone number, 11 digits (0803...).',
        'That is not a Nigerian mobile number. Enter 11 digits (0803...).',
        `Network of ${other}:`,
        'Enter the amount in naira, N50 to N1,000:',
        `N200 MTN airtime to ${other}.`,
        answers.at(-1)!.screen.split('\n')[0]!,
      ],
    );
    assert.match(
      answers.at(-1)!.body,
      new RegExp(`^END Processing N200 MTN airtime to ${other}\\. Ref \\w+\\.`),
    );
    assert.equal(await walletKobo(world, user.userId), 180_000n);
  });

  it('lists data plans five to a screen, 0 for more, and buys the one picked', async () => {
    const user = await ussdUser(world, 2000);
    const plans = ok(
      await get<{ items: Array<{ plan_id: string; amount: number; name: string }> }>(
        world,
        'listDataPlans',
        { network: 'mtn' },
        { token: user.accessToken },
      ),
    ).items;
    assert.ok(plans.length > 10, 'the sandbox sells more than two screens of MTN plans');
    const answers = await session(world, user.phone, ['3', '1', '0', '0', '2', '1', PIN]);
    const [, networks, page1, page2, page3, who, confirm, end] = answers;
    assert.match(networks!.screen, /^Data network:\n1 MTN\n2 Airtel\n3 Glo\n4 9mobile\n0 Back$/);
    for (const page of [page1!, page2!]) {
      assert.equal(page.type, 'CON');
      assert.equal(page.screen.split('\n').length, 7, `a heading, five plans and 0 More: ${page.screen}`);
      assert.match(page.screen, /\n0 More$/);
      assert.ok(!/MTN/.test(page.screen.split('\n').slice(1).join('\n')), 'no network name on the lines');
    }
    assert.match(page1!.screen, /^MTN data:\n1 500MB SME 30d N\d/);
    const picked = plans[11]!;
    assert.match(
      page3!.screen.split('\n')[2]!,
      new RegExp(`^2 .* N${picked.amount.toLocaleString('en-NG')}$`),
    );
    assert.match(who!.screen, /^Data for:\n1 This phone\n2 Another number\n0 Back$/);
    assert.match(
      confirm!.screen,
      new RegExp(`data for N[\\d,.]+ to ${user.phone}\\.\\nEnter PIN to pay, 0 to cancel$`),
    );
    assert.match(
      end!.body,
      /^END Processing .* data for N[\d,.]+ to \d{11}\. Ref \w+\. The result will be in your billrail app\.$/,
    );
    const { items } = ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        {},
        { token: user.accessToken },
      ),
    );
    assert.equal(items[0]!.service, 'data');
    assert.equal(await walletKobo(world, user.userId), 200_000n - BigInt(Math.round(picked.amount * 100)));
  });

  it('shows the last three transactions, one short line each', async () => {
    const user = await ussdUser(world, 2000);
    for (const amount of ['100', '200', '300']) await session(world, user.phone, ['2', '1', amount, PIN]);
    const answers = await session(world, user.phone, ['4']);
    const end = answers.at(-1)!;
    assert.equal(end.type, 'END');
    const rows = end.screen.split('\n');
    assert.equal(rows[0], 'Last 3:');
    assert.equal(rows.length, 4);
    // The amount once, signed: the purchase's description's own face value is left out.
    assert.match(rows[1]!, /^\d\d\/\d\d -N300 MTN airtime to \d{11}$/);
    assert.match(rows[3]!, /^\d\d\/\d\d -N100 /);
  });

  it('counts a wrong PIN toward the app’s lockout once, however often the gateway repeats it', async () => {
    const user = await ussdUser(world, 2000);
    const app = failure(
      await post(
        world,
        'buyAirtime',
        { network: 'mtn', phone: mtn('5'), amount: 100, pin: '0000' },
        { token: user.accessToken },
      ),
    );
    assert.equal(app.code, 'INVALID_PIN');
    const sessionId = randomSession();
    const inputs = ['2', '1', '100', '1111'];
    const wrong = await dial(world, { phone: user.phone, sessionId, inputs });
    assert.equal(
      wrong.body,
      'END Wrong PIN. 3 tries left. Nothing was paid.',
      'the app’s wrong PIN counted too',
    );
    assert.equal(
      (await dial(world, { phone: user.phone, sessionId, inputs })).body,
      wrong.body,
      'a repeat is not counted',
    );
    const next = await session(world, user.phone, ['2', '1', '100', '2222']);
    assert.equal(next.at(-1)!.body, 'END Wrong PIN. 2 tries left. Nothing was paid.');
    await session(world, user.phone, ['2', '1', '100', '3333']);
    const locked = await session(world, user.phone, ['2', '1', '100', '4444']);
    assert.match(
      locked.at(-1)!.body,
      /^END Too many wrong PINs\. Try again in \d+ minutes?\. Nothing was paid\.$/,
    );
    const lockedInApp = failure(
      await post(
        world,
        'buyAirtime',
        { network: 'mtn', phone: mtn('5'), amount: 100, pin: PIN },
        { token: user.accessToken },
      ),
    );
    assert.equal(lockedInApp.code, 'PIN_LOCKED', 'the app sees the lock');
    assert.equal(await walletKobo(world, user.userId), 200_000n, 'nothing debited');
  });

  it('refuses over USSD_SINGLE_MAX and USSD_DAILY_MAX with END, debiting nothing', async () => {
    const user = await ussdUser(world, 5000);
    // The prompt offers up to USSD_SINGLE_MAX; data whose price passes it is refused at the PIN.
    const over = await session(world, user.phone, ['2', '1', '1001']);
    assert.equal(over.at(-1)!.body, 'CON Enter a whole amount from N50 to N1,000:');
    const plans = await session(world, user.phone, ['3', '1', '0', '0', '0']);
    const tenGig = plans
      .at(-1)!
      .screen.split('\n')
      .findIndex((line) => / N[1-9],\d{3}/.test(line));
    assert.ok(tenGig > 0, plans.at(-1)!.screen);
    const single = await session(world, user.phone, ['3', '1', '0', '0', '0', String(tenGig), '1', PIN]);
    assert.equal(
      single.at(-1)!.body,
      'END USSD payments are up to N1,000; use the app for more. Nothing was paid.',
    );
    assert.equal(await walletKobo(world, user.userId), 500_000n);

    assert.match(
      (await session(world, user.phone, ['2', '1', '900', PIN])).at(-1)!.body,
      /^END Processing N900/,
    );
    const daily = await session(world, user.phone, ['2', '1', '700', PIN]);
    assert.equal(
      daily.at(-1)!.body,
      'END That passes your USSD limit for today: N600 left. Use the app for more. Nothing was paid.',
    );
    assert.equal(await walletKobo(world, user.userId), 410_000n, 'only the first debited');
    assert.match(
      (await session(world, user.phone, ['2', '1', '600', PIN])).at(-1)!.body,
      /^END Processing N600/,
      'what is left can be paid',
    );
    const { total } = ok(
      await get<{ total: number }>(world, 'listMyVtuTransactions', {}, { token: user.accessToken }),
    );
    assert.equal(total, 2);
  });

  it('answers a form it cannot read with an apology, never a 500, and a stranger’s with 404', async () => {
    const post = (body: string, type: string, token = world.ctx.config.ussd.callbackToken!) =>
      fetch(callbackUrl(world, token), { method: 'POST', headers: { 'content-type': type }, body });
    const json = await post('{"text":"1"}', 'application/json');
    assert.equal(json.status, 200);
    assert.equal(await json.text(), 'END Sorry, we could not read that. Please dial again.');
    const noSession = await post('phoneNumber=%2B2348031234567&text=', 'application/x-www-form-urlencoded');
    assert.equal(await noSession.text(), 'END Sorry, we could not read that. Please dial again.');
    assert.equal((await post('{"text":"1"}', 'application/json', 'y'.repeat(32))).status, 404);
    // A session id is one phone's: another phone's step under it meets none of its answers.
    const first = await ussdUser(world, 100);
    const second = await ussdUser(world, 100);
    const sessionId = randomSession();
    assert.equal((await dial(world, { phone: first.phone, sessionId, inputs: [] })).type, 'CON');
    assert.equal(
      (await dial(world, { phone: second.phone, sessionId, inputs: ['1'] })).body,
      'END Sorry, we could not read that. Please dial again.',
    );
  });

  it('purges the sessions and steps past their period, keeping the day’s USSD payments', async () => {
    const count = async (table: 'ussd_sessions' | 'ussd_steps' | 'ussd_payments') =>
      (
        await world.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n;
    const payments = await count('ussd_payments');
    assert.ok(Number(await count('ussd_steps')) > 0);
    const now = world.ctx.clock.now();
    assert.equal(
      await world.ctx.modules.ussd.api.purgeSessions(new Date(now.getTime() - 60_000), 1000),
      0,
      'nothing young',
    );
    const tomorrow = new Date(now.getTime() + 86_400_000);
    while ((await world.ctx.modules.ussd.api.purgeSessions(tomorrow, 50)) > 0);
    assert.equal(Number(await count('ussd_steps')), 0);
    assert.equal(Number(await count('ussd_sessions')), 0);
    assert.equal(await count('ussd_payments'), payments, 'the money record stays');
  });

  it('gives a failed purchase’s room back to the USSD day once it is refunded', async () => {
    const user = await ussdUser(world, 5000);
    // A number ending in 1: the sandbox provider refuses it, and the purchase is refunded.
    const failing = await session(world, user.phone, ['2', '2', mtn('1'), '1', '900', PIN]);
    assert.match(failing.at(-1)!.body, /^END Processing N900/);
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
    const failed = await world.ctx.db
      .selectFrom('ussd_payments')
      .select('failed_at')
      .where('reference', '=', purchase!.reference)
      .executeTakeFirstOrThrow();
    assert.ok(failed.failed_at !== null, 'the USSD payment is marked failed');
    assert.equal(await walletKobo(world, user.userId), 500_000n, 'refunded');
    const again = await session(world, user.phone, ['2', '1', '900', PIN]);
    assert.match(
      again.at(-1)!.body,
      /^END Processing N900/,
      'N900 + N900 would pass N1,500 had the failure counted',
    );
  });

  it('keeps the PIN, the inputs and the token out of the log', () => {
    const log = logged();
    const token = world.ctx.config.ussd.callbackToken!;
    assert.ok(log.includes('ussd step'), 'the steps are logged');
    assert.ok(!log.includes(token), 'the token is not in the log');
    assert.ok(
      log.includes('"/api/public/ussd/[redacted]"'),
      'the request log shows the path, its token redacted',
    );
    assert.ok(log.includes('"inputs":4'), 'a step is logged with how many inputs it had');
    assert.ok(!log.includes(`2*1*500*${PIN}`) && !log.includes(`2%2A1%2A500%2A${PIN}`), 'the text is not');
    assert.ok(!new RegExp(`\\b${PIN}\\b`).test(log), 'the PIN is not');
    assert.ok(!log.includes(callbackUrl(world)), 'nor the callback URL');
  });
});

describe('the USSD callback behind USSD_ALLOWED_IPS', () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { USSD_ALLOWED_IPS: '10.0.0.0/8,2001:db8::/32' } });
  });
  after(() => world?.close());

  it('answers a caller outside the list as for a wrong token: 404', async () => {
    const user = await ussdUser(world, 0);
    const answer = await dial(world, { phone: user.phone, sessionId: 'ATUid_2', inputs: [] });
    assert.equal(answer.status, 404);
    assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'NOT_FOUND');
  });
});

describe('the USSD channel under a slow provider and a busy phone', () => {
  let world: World;
  // A signed-in person's requests a minute, which also bounds one phone's USSD steps.
  const perMinute = 20;
  before(async () => {
    world = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: String(perMinute) } });
  });
  after(() => world?.close());

  it('answers END at once that they cannot be shown now, instead of holding the screen', async () => {
    const user = await ussdUser(world, 1000);
    const fault = await fetch(`${world.baseUrl}/__sandbox/providers/data/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'timeout', count: 5 }),
    });
    assert.equal(fault.status, 200);
    try {
      const answers = await session(world, user.phone, ['3', '1']);
      assert.equal(answers.at(-1)!.body, 'END Data plans cannot be shown now. Please try again in a minute.');
    } finally {
      await fetch(`${world.baseUrl}/__sandbox/providers/data/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode: 'normal' }),
      });
    }
  });

  it('answers a phone past its steps a minute with END, not a 429 the gateway cannot show', async () => {
    const user = await ussdUser(world, 0);
    const sessionId = `ATUid_${randomUUID().replaceAll('-', '')}`;
    const answers: Answer[] = [];
    for (let i = 0; i <= perMinute; i++)
      answers.push(await dial(world, { phone: user.phone, sessionId, inputs: [] }));
    assert.ok(answers.slice(0, perMinute).every((answer) => answer.type === 'CON'));
    assert.equal(answers.at(-1)!.status, 200);
    assert.equal(
      answers.at(-1)!.body,
      'END Too many requests from this phone. Please wait a minute and dial again.',
    );
    const other = await ussdUser(world, 0);
    assert.equal(
      (await dial(world, { phone: other.phone, sessionId: `${sessionId}b`, inputs: [] })).type,
      'CON',
      'per phone',
    );
  });
});
