import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { paymentWebhookPath } from '../../src/http/payment-webhook-route.ts';
import { createHttpMailboxMailer } from '../../src/providers/email/mailer.ts';
import { servicePaymentWebhookPath } from '../../src/sandbox/server.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { createTestDatabase, onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import {
  failure,
  get,
  ok,
  post,
  type Reachable,
  readSms,
  type SignedIn,
  uniquePhone,
} from '../helpers/world.ts';
import { PIN } from '../vtu/purchase-support.ts';
import {
  type Child,
  children,
  control,
  type Deployment,
  deploy,
  moveClock,
  run,
  SANDBOX_MAIN,
  sandboxClock,
  signInThrough,
  stopAll,
} from './support.ts';

// The sandbox as its own process (npm run sandbox) and service processes that use it over HTTP
// (SANDBOX_URL), shown as a user of them would notice: one payment provider, one SMS gateway, one
// mailbox and one clock for every process.

/** The OTP lives 5 minutes (API.md section 4). */
const PAST_OTP_EXPIRY_SECONDS = 5 * 60 + 1;
/** The first requery of an unanswered purchase comes 60 s after it was sent. */
const PAST_FIRST_REQUERY_SECONDS = 61;
/**
 * Past the longest wait between two requeries (src/vtu/settlement.ts), and past the 15 minutes after
 * which a reference the provider still does not know is failed.
 */
const PAST_LONGEST_REQUERY_DELAY_SECONDS = 3_601;

/** A new access token (a long clock move expires the old one), through `service`. */
async function refreshed(service: Reachable, user: SignedIn): Promise<SignedIn> {
  const tokens = ok(
    await post<{ accessToken: string; refreshToken: string }>(service, 'refreshSession', {
      refreshToken: user.refreshToken,
    }),
  );
  return { ...user, ...tokens };
}

/** A buyer at Tier 1 with a PIN, signed in through `service`. */
async function buyer(service: Reachable, sandbox: Reachable): Promise<SignedIn> {
  const user = await signInThrough(service, sandbox);
  const auth = { token: user.accessToken };
  ok(await post(service, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, auth));
  ok(await post(service, 'setTransactionPin', { pin: PIN }, auth));
  return user;
}

/** A top-up opened through `service` and paid on the sandbox's checkout page. */
async function payTopup(service: Reachable, sandbox: Reachable, user: SignedIn, naira: number) {
  const intent = ok(
    await post<{ reference: string; checkoutUrl: string }>(
      service,
      'createTopupIntent',
      { amount: naira },
      { token: user.accessToken },
    ),
  );
  assert.equal(intent.checkoutUrl, `${sandbox.baseUrl}/__sandbox/checkout/${intent.reference}`);
  const paid = await fetch(`${intent.checkoutUrl}/pay`, { method: 'POST', redirect: 'manual' });
  await paid.arrayBuffer();
  assert.ok(paid.status < 400, `the checkout page answered ${paid.status}`);
  return intent;
}

const walletBalance = async (service: Reachable, user: SignedIn) =>
  ok(await get<{ balance: number }>(service, 'getWallet', {}, { token: user.accessToken })).balance;

const purchase = async (service: Reachable, user: SignedIn, id: string) =>
  ok(await post<VtuTransactionView>(service, 'getMyVtuTransaction', { id }, { token: user.accessToken }));

const buyAirtime = async (service: Reachable, user: SignedIn, phone: string, amount: number) =>
  ok(
    await post<VtuTransactionView>(
      service,
      'buyAirtime',
      { network: 'mtn', phone, amount, pin: PIN },
      { token: user.accessToken },
    ),
  );

/** An MTN number ending in the given digit: the sandbox provider reads its outcome from it. */
const mtnEndingIn = (digit: string) => `${uniquePhone().slice(0, -1)}${digit}`;

/**
 * Starting the processes: the first service start of a checkout builds the web client, which takes
 * minutes on a loaded machine; a start that never comes fails the hook at this bound.
 */
const STARTING = { timeout: 300_000 };

/** The sandbox VTpass's purchase call. */
const billsPay = 'POST /__sandbox/vtu/bills/api/pay';

/** The requests the provider's last fault met at the sandbox. */
async function faultMet(sandbox: Reachable, provider: string): Promise<string[]> {
  const answer = await fetch(`${sandbox.baseUrl}/__sandbox/providers/${provider}/faults`);
  return ((await answer.json()) as { data: { met: string[] } }).data.met;
}

/** The process's own clock, as a user sees it: an unclaimed check-in is claimable from now. */
const clockOf = async (service: Reachable, user: SignedIn) =>
  new Date(
    ok(await get<{ nextClaimAt: string }>(service, 'getCheckinStatus', {}, { token: user.accessToken }))
      .nextClaimAt,
  );

describe('the sandbox process and two service processes (PostgreSQL)', {
  skip: onPostgres()
    ? false
    : 'needs DATABASE_URL: two service processes share one database only on PostgreSQL (PGlite is one process)',
}, () => {
  const owned = children();
  let deployment: Deployment;
  let a: Child;
  let b: Child;
  let sandbox: Child;

  before(async () => {
    const database = await createTestDatabase();
    owned.cleanups.push(() => database.drop());
    assert.equal(database.target.kind, 'postgres');
    const url = database.target.kind === 'postgres' ? database.target.url : undefined;
    // A short provider timeout: a purchase whose answer never comes is unknown soon.
    deployment = await deploy(owned, { count: 2, databaseUrl: url, serviceEnv: { VTU_TIMEOUT_MS: '3000' } });
    ({ sandbox } = deployment);
    [a, b] = deployment.services as [Child, Child];
  }, STARTING);
  after(() => stopAll(owned));

  it('keeps the sign-in code and the email that process A sent where the sandbox shows them', async () => {
    const user = await signInThrough(a, sandbox);
    // The same session is good at B: one service, two processes.
    ok(await get(b, 'getMe', {}, { token: user.accessToken }));
    const email = `standalone-${user.userId}@example.com`;
    ok(await post(a, 'updateProfile', { email }, { token: user.accessToken }));
    await until(async () => {
      const listed = await fetch(`${sandbox.baseUrl}/__sandbox/emails?to=${encodeURIComponent(email)}`);
      const body = (await listed.json()) as { data: Array<{ text: string }> };
      return body.data.some((message) => /\b\d{6}\b/.test(message.text));
    }, 'the verification email at the sandbox mailbox');
  });

  it('credits a checkout opened through A and paid at the sandbox, as B reads the wallet', async () => {
    const user = await signInThrough(a, sandbox);
    await payTopup(a, sandbox, user, 2_500);
    await until(async () => (await walletBalance(b, user)) === 2_500, 'the wallet read through B credited');
  });

  it('settles a pending purchase bought through A once the sandbox clock moves', async () => {
    const user = await buyer(a, sandbox);
    await payTopup(a, sandbox, user, 1_000);
    await until(async () => (await walletBalance(a, user)) === 1_000, 'the top-up credited');
    // Last digit 2: pending at the provider, success on requery (API.md section 8).
    const bought = await buyAirtime(a, user, mtnEndingIn('2'), 200);
    assert.equal(bought.status, 'processing');
    // Each move runs the requeries due by then; the purchase may still be on its way to the
    // provider at the first one, so the clock moves until the requery has settled it.
    await until(async () => {
      await moveClock(sandbox, PAST_FIRST_REQUERY_SECONDS);
      return (await purchase(b, user, bought.id)).status === 'success';
    }, 'the pending purchase settled after a clock move');
  });

  it('moves the clock of both processes, so that a code sent through A has expired at B', async () => {
    const user = await signInThrough(b, sandbox);
    const phone = uniquePhone();
    ok(await post(a, 'requestOtp', { phone }));
    const { code } = await readSms(sandbox, phone);
    const moved = await moveClock(sandbox, PAST_OTP_EXPIRY_SECONDS);
    // A was called by the move (SERVICE_URL); B follows the sandbox clock by its own reading.
    for (const service of [a, b]) {
      await until(
        async () => (await clockOf(service, user)) >= moved,
        `the clock of ${service.baseUrl} moved`,
      );
    }
    const expired = failure(await post(b, 'verifyOtp', { phone, code }));
    assert.ok(expired.status >= 400 && expired.status < 500, JSON.stringify(expired));
  });

  it('keeps a purchase processing while the provider fails, and requery resolves it once cleared', async () => {
    let user = await buyer(a, sandbox);
    await payTopup(a, sandbox, user, 1_000);
    await until(async () => (await walletBalance(a, user)) === 1_000, 'the top-up credited');
    const set = await control(sandbox, '/__sandbox/providers/bills/faults', { mode: 'error' });
    assert.deepEqual(
      [set.status, set.body.data],
      [200, { mode: 'error', remaining: null, met: [], held: 0 }],
    );
    // Last digit 5: an immediate success, were the provider well.
    const bought = await buyAirtime(a, user, mtnEndingIn('5'), 300);
    await until(
      async () => (await faultMet(sandbox, 'bills')).includes(billsPay),
      'the purchase met the fault',
    );
    // A 503 is no word from the provider: the outcome is unknown, nothing is refunded yet.
    assert.equal((await purchase(b, user, bought.id)).status, 'processing');
    assert.equal(await walletBalance(b, user), 700);
    assert.equal(
      (await control(sandbox, '/__sandbox/providers/bills/faults', { mode: 'normal' })).status,
      200,
    );
    // The provider never took the order: past the not-found window the requery fails it, refunded.
    // Each move passes the longest requery delay, and expires the access token: a new one comes from
    // A, which the move's call reached (B follows within its poll, and a token it issued before
    // then would be dated before the move).
    await until(async () => {
      await moveClock(sandbox, PAST_LONGEST_REQUERY_DELAY_SECONDS);
      user = await refreshed(a, user);
      return (await purchase(b, user, bought.id)).status === 'failed';
    }, 'the requery resolved the purchase');
    await until(async () => (await walletBalance(b, user)) === 1_000, 'the refund');
  });

  it('refuses bad control input with 400', async () => {
    for (const [path, body] of [
      ['/__sandbox/providers/data/faults', { mode: 'slow' }],
      ['/__sandbox/providers/payments/faults', { mode: 'error', count: 0 }],
      ['/__sandbox/providers/social/faults', { mode: 'error', extra: 1 }],
      ['/__sandbox/clock', { advanceSeconds: -1 }],
      ['/__sandbox/mailbox/messages', { to: 'not an address' }],
      ['/__sandbox/webhooks', { mode: 'lose' }],
      ['/__sandbox/providers/airtime-cash/faults', '{not json'],
    ] as const) {
      const answer = await control(sandbox, path, body);
      assert.deepEqual([answer.status, answer.body.success], [400, false], path);
    }
    const unknown = await control(sandbox, '/__sandbox/providers/kyc/faults', { mode: 'error' });
    assert.equal(unknown.status, 404);
  });
});

describe('the sandbox process and one service process', () => {
  const owned = children();
  let sandbox: Child;
  let service: Child;

  before(async () => {
    // PGlite files in the service's DATA_DIR, or a database of its own on PostgreSQL.
    let url: string | undefined;
    if (onPostgres()) {
      const database = await createTestDatabase();
      owned.cleanups.push(() => database.drop());
      url = database.target.kind === 'postgres' ? database.target.url : undefined;
    }
    const deployment = await deploy(owned, {
      count: 1,
      databaseUrl: url,
      serviceEnv: { VTU_TIMEOUT_MS: '1500' },
    });
    sandbox = deployment.sandbox;
    service = deployment.services[0]!;
  }, STARTING);
  after(() => stopAll(owned));

  it('credits a checkout paid at the sandbox and follows its clock', async () => {
    const user = await signInThrough(service, sandbox);
    await payTopup(service, sandbox, user, 100);
    await until(async () => (await walletBalance(service, user)) === 100, 'the top-up credited');
    const before = await sandboxClock(sandbox);
    await moveClock(sandbox, 3_600);
    // The move's call to the service carried the new time: it is followed before the answer. The
    // service's reading of it is later than the time the call was sent by the call's own trip, so it
    // is compared with the hour the move added, not with the sandbox's clock at the answer.
    const fresh = await refreshed(service, user);
    assert.ok((await clockOf(service, fresh)).getTime() >= before.getTime() + 3_600_000);
  });

  it('holds a purchase while the provider does not answer, and releases the request', async () => {
    const user = await buyer(service, sandbox);
    await payTopup(service, sandbox, user, 500);
    await until(async () => (await walletBalance(service, user)) === 500, 'the top-up credited');
    const set = await control(sandbox, '/__sandbox/providers/bills/faults', { mode: 'timeout' });
    assert.equal(set.status, 200);
    const bought = await buyAirtime(service, user, mtnEndingIn('5'), 100);
    const held = async () => {
      const state = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/faults`);
      return ((await state.json()) as { data: { held: number } }).data.held;
    };
    await until(async () => (await faultMet(sandbox, 'bills')).includes(billsPay), 'the purchase call held');
    // The service gives up on it (VTU_TIMEOUT_MS) and closes it, which releases it at the sandbox:
    // no answer is no word from the provider, so the outcome is unknown, not a failure.
    await until(async () => (await held()) === 0, 'the held call given up');
    assert.equal((await purchase(service, user, bought.id)).status, 'processing');
    assert.equal(await walletBalance(service, user), 400);
    assert.equal(
      (await control(sandbox, '/__sandbox/providers/bills/faults', { mode: 'normal' })).status,
      200,
    );
    // Once normal, the provider answers again: a new purchase succeeds at once.
    const later = await buyAirtime(service, user, mtnEndingIn('5'), 100);
    await until(
      async () => (await purchase(service, user, later.id)).status === 'success',
      'a purchase succeeded',
    );
  });

  it('takes mail posted by a remote mailer into the mailbox', async () => {
    const mailer = createHttpMailboxMailer({
      sandboxUrl: sandbox.baseUrl,
      from: 'billrail <no-reply@billrail.test>',
      timeoutMs: 5_000,
    });
    await mailer.send({ to: 'ops@example.com', subject: 'Hello', text: 'From another process' });
    const listed = await fetch(`${sandbox.baseUrl}/__sandbox/emails?to=ops@example.com`);
    const body = (await listed.json()) as { data: Array<{ subject: string; from: string }> };
    assert.deepEqual(
      body.data.map((e) => [e.subject, e.from]),
      [['Hello', 'billrail <no-reply@billrail.test>']],
    );
  });

  it('stops gracefully on SIGTERM', async () => {
    sandbox.process.kill('SIGTERM');
    assert.deepEqual(await sandbox.exited, { code: 0, signal: null });
  });
});

describe('the sandbox process configuration', () => {
  const owned = children();
  after(() => stopAll(owned));

  it('exits 1 with the variable named on a bad or missing value', async () => {
    for (const [env, named] of [
      [{}, 'invalid SANDBOX_CLOCK_TOKEN: required'],
      [{ SANDBOX_CLOCK_TOKEN: 'short' }, 'invalid SANDBOX_CLOCK_TOKEN'],
      [{ SANDBOX_CLOCK_TOKEN: 'x'.repeat(20), PORT: 'eighty' }, 'invalid PORT'],
      [{ SANDBOX_CLOCK_TOKEN: 'x'.repeat(20), SERVICE_URL: 'ftp://service' }, 'invalid SERVICE_URL'],
      [{ SANDBOX_CLOCK_TOKEN: 'x'.repeat(20), VAPID_PUBLIC_KEY: 'abc' }, 'invalid VAPID_PUBLIC_KEY'],
    ] as const) {
      const child = run(owned, SANDBOX_MAIN, env);
      assert.equal((await child.exited).code, 1, JSON.stringify(env));
      assert.match(child.output(), new RegExp(`billrail-sandbox: ${named}`), child.output());
    }
  });

  it('names the service webhook path the service serves', () => {
    assert.equal(servicePaymentWebhookPath, paymentWebhookPath);
  });

  it('requires the shared clock token and VAPID keys of a service with SANDBOX_URL', () => {
    const remote = { SANDBOX: '1', SANDBOX_URL: 'http://127.0.0.1:4010/' };
    const keys = { VAPID_PUBLIC_KEY: 'public', VAPID_PRIVATE_KEY: 'private' };
    const token = { SANDBOX_CLOCK_TOKEN: 'a-token-of-20-chars!' };
    assert.throws(() => loadConfig({ ...remote, ...keys }), /invalid SANDBOX_CLOCK_TOKEN: required/);
    assert.throws(() => loadConfig({ ...remote, ...token }), /invalid VAPID_PUBLIC_KEY: required/);
    assert.throws(
      () => loadConfig({ ...remote, ...keys, ...token, SANDBOX_VTU_BASE_URL: 'http://127.0.0.1:1' }),
      /invalid SANDBOX_VTU_BASE_URL/,
    );
    assert.throws(
      () => loadConfig({ SANDBOX: '0', SANDBOX_URL: 'http://127.0.0.1:4010' }),
      /invalid SANDBOX_URL: only used when SANDBOX is on/,
    );
    const config = loadConfig({ ...remote, ...keys, ...token });
    assert.ok(config.providers.mode === 'sandbox');
    assert.deepEqual(config.providers.remote, {
      url: 'http://127.0.0.1:4010',
      clockToken: token.SANDBOX_CLOCK_TOKEN,
      clockPollMs: 1_000,
      startTimeoutMs: 30_000,
    });
    assert.equal(config.kyc.livenessUrl, 'http://127.0.0.1:4010/__sandbox/liveness');
    const inProcess = loadConfig({ SANDBOX: '1' }).providers;
    assert.ok(inProcess.mode === 'sandbox');
    assert.equal(inProcess.remote, undefined);
  });
});
