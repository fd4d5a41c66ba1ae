import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.ts';
import { until } from '../helpers/until.ts';
import {
  type ApiResponse,
  createWorld,
  get,
  ok,
  post,
  readSms,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

// A database that goes away (connections reset) or stops answering (a partition) is the service's
// own outage: every request answers 503 SERVICE_UNAVAILABLE with Retry-After within
// DATABASE_TIMEOUT_MS, never 500 and never a hang, and the same request succeeds once it is back.
// The service connects through a TCP proxy the test cuts (test/helpers/pg-proxy.ts).

const skip = process.env.DATABASE_URL ? false : 'needs PostgreSQL (DATABASE_URL): PGlite runs in the process';
/** Far above the service's bound (1 s here): a request that runs into it has hung. */
const clientPatienceMs = 15_000;

describe('the database out of reach (PostgreSQL)', { skip }, () => {
  let world: World;
  let proxied: World;
  let proxy: PgProxy;

  before(async () => {
    world = await createWorld();
    proxy = await startPgProxy(world.ctx.database.url!);
    proxied = await createWorld({
      sameDatabaseAs: world,
      databaseUrl: async () => proxy.url,
      databaseTimeoutMs: 1_000,
    });
  });
  after(async () => {
    await proxied?.close();
    await proxy?.close();
    await world?.close();
  });

  const readyz = async () =>
    (await fetch(`${proxied.baseUrl}/readyz`, { signal: AbortSignal.timeout(clientPatienceMs) })).status;

  for (const mode of ['reset', 'silent'] as const) {
    it(`${mode}: reads and writes answer 503 with Retry-After, and the same key succeeds once it is back`, async () => {
      const user = await signIn(proxied);
      const phone = uniquePhone();
      const key = randomUUID();
      const cut = proxy.cutAll(mode);
      try {
        const wallet = await get(proxied, 'getWallet', {}, { token: user.accessToken });
        assert.equal(wallet.status, 503);
        assert.equal(wallet.headers.get('retry-after'), '5');
        assert.deepEqual(
          wallet.body.success ? null : wallet.body.error.code,
          'SERVICE_UNAVAILABLE',
          JSON.stringify(wallet.body),
        );
        const otp = await post(proxied, 'requestOtp', { phone }, { idempotencyKey: key });
        assert.equal(otp.status, 503, JSON.stringify(otp.body));
        assert.equal(await readyz(), 503);
      } finally {
        cut.restore();
      }
      // Back: the pool makes new connections; the first requests may still meet a broken one.
      let wallet = await get(proxied, 'getWallet', {}, { token: user.accessToken });
      for (let i = 0; i < 5 && wallet.status === 503; i++)
        wallet = await get(proxied, 'getWallet', {}, { token: user.accessToken });
      assert.equal(wallet.status, 200, JSON.stringify(wallet.body));
      // Nothing of the refused request was kept: its key runs it now.
      ok(await post(proxied, 'requestOtp', { phone }, { idempotencyKey: key }));
      assert.equal(await readyz(), 200);
    });
  }

  it('a request the outage cut off gives its Idempotency-Key back once the database returns', async () => {
    const phone = uniquePhone();
    ok(await post(proxied, 'requestOtp', { phone }));
    const { code } = await readSms(proxied, phone);
    const key = randomUUID();
    // The key is taken (committed), then the sign-in's transaction is cut off mid-way: the service
    // answers 503, and the release of the key cannot reach the database either.
    const hold = proxy.holdAnswers(/update "otp_codes"/);
    const cutOff = post(proxied, 'verifyOtp', { phone, code }, { idempotencyKey: key });
    let cut: { restore(): void } | undefined;
    try {
      await until(() => hold.held() > 0, "the sign-in's use of the code carried out");
      cut = proxy.cutAll('reset');
      const refused = await cutOff;
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
    } finally {
      hold.release();
      cut?.restore();
    }
    // The client retries with the same key, as it was told to. Before the release reaches the
    // database it may meet 503 or 409; never for long (the key is not left to go stale, 5 minutes).
    let retried: ApiResponse | undefined;
    await until(async () => {
      retried = await post(proxied, 'verifyOtp', { phone, code }, { idempotencyKey: key });
      return retried.status !== 503 && retried.status !== 409;
    }, 'a retry with the same key running');
    assert.equal(retried?.status, 200, JSON.stringify(retried?.body));
    const held = await world.ctx.db
      .selectFrom('idempotency_keys')
      .select('state')
      .where('key', '=', key)
      .where('state', '=', 'in_progress')
      .execute();
    assert.deepEqual(held, [], 'no key is left in progress');
  });
});
