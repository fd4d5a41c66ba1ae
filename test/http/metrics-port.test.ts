import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildMetricsApp } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { parseExposition, sampleValue } from './metrics-support.ts';

// Where /metrics is served and who may read it (API.md section 17.1): with METRICS_PORT, on a
// listener of its own (main.ts starts it in API processes and workers alike) and not on the public
// API port; without it, on the API port outside production and nowhere in production; with
// METRICS_TOKEN, only to `Authorization: Bearer <token>`.

const token = randomBytes(24).toString('base64url');

describe('/metrics on METRICS_PORT, with METRICS_TOKEN', () => {
  let world: World;
  let metricsApp: FastifyInstance;
  let metricsUrl: string;
  before(async () => {
    world = await createWorld({ env: { METRICS_PORT: '0', METRICS_TOKEN: token } });
    metricsApp = await buildMetricsApp(world.ctx);
    metricsUrl = await metricsApp.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await metricsApp.close();
    await world.close();
  });

  it('is not served on the API port, with or without the token', async () => {
    for (const headers of [{}, { authorization: `Bearer ${token}` }]) {
      const response = await fetch(`${world.baseUrl}/metrics`, { headers });
      assert.notEqual(response.status, 200);
      assert.doesNotMatch(await response.text(), /billrail_ready/);
    }
    // The API itself is there.
    assert.equal((await fetch(`${world.baseUrl}/healthz`)).status, 200);
  });

  it('answers 401 UNAUTHENTICATED on its own port without the right bearer token', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { authorization: `Bearer ${token.slice(0, -1)}x` },
      { authorization: `Bearer ${token}x` },
      { authorization: token },
      { authorization: `Basic ${Buffer.from(`prometheus:${token}`).toString('base64')}` },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${metricsUrl}/metrics`, { headers });
      assert.equal(response.status, 401, JSON.stringify(headers));
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
      const body = (await response.json()) as { success: boolean; error: { code: string } };
      assert.deepEqual([body.success, body.error.code], [false, 'UNAUTHENTICATED']);
    }
  });

  it('serves the registry on its own port to the bearer of the token, and its health', async () => {
    const response = await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    const samples = parseExposition(await response.text());
    assert.equal(sampleValue(samples, 'billrail_ready'), 1);
    assert.ok(
      sampleValue(samples, 'billrail_figures_age_seconds') !== undefined,
      'the age of the figures is served',
    );
    // Health needs no token: a load balancer or systemd asks it.
    assert.equal((await fetch(`${metricsUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${metricsUrl}/readyz`)).status, 200);
  });
});

describe('METRICS_PORT and METRICS_TOKEN in the configuration', () => {
  /** A production environment that loads (strong, random secrets; every provider named). */
  function productionEnv(): Record<string, string> {
    const secret = () => randomBytes(32).toString('base64url');
    return {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://billrail@db.internal:5432/billrail',
      TRUST_PROXY_HOPS: '1',
      PAYMENT_SIGNING_SECRET: secret(),
      SECRET_PEPPER: secret(),
      ADMIN_TOTP_KEY: secret(),
      SMS_BASE_URL: 'https://sms.example.com',
      SMS_API_KEY: secret(),
      KYC_BASE_URL: 'https://api.dojah.io',
      KYC_APP_ID: 'kyc-app',
      KYC_SECRET_KEY: secret(),
      PUBLIC_BASE_URL: 'https://api.example.com/',
      VAPID_PUBLIC_KEY: secret(),
      VAPID_PRIVATE_KEY: secret(),
      VAPID_SUBJECT: 'mailto:ops@example.com',
      DATA_PROVIDER_BASE_URL: 'https://data-vendor.example.com/',
      DATA_PROVIDER_TOKEN: secret(),
      DATA_FUNDING_ACCOUNT: '058:0123456780:Data Vendor Ltd',
      BILLS_BASE_URL: 'https://vtpass.com/api',
      BILLS_API_KEY: secret(),
      BILLS_PUBLIC_KEY: secret(),
      BILLS_SECRET_KEY: secret(),
      BILLS_FUNDING_ACCOUNT: '044:0123456781:VTpass: Float',
      SOCIAL_BASE_URL: 'https://panel.example.com/api/v2',
      SOCIAL_API_KEY: secret(),
      SOCIAL_FUNDING_ACCOUNT: '058:0123456782:Social Panel',
      AIRTIME_CASH_BASE_URL: 'https://airtime-cash.example/portal/api',
      AIRTIME_CASH_API_KEY: secret(),
      KYC_LIVENESS_URL: 'https://widget.dojah.io/liveness',
    };
  }

  it('serves no /metrics in production unless METRICS_PORT is said, then on that port alone', () => {
    const unset = loadConfig(productionEnv()).http;
    assert.equal(unset.metricsPort, undefined);
    assert.equal(unset.metricsOnApiPort, false);
    const set = loadConfig({ ...productionEnv(), METRICS_PORT: '9100' }).http;
    assert.equal(set.metricsPort, 9100);
    assert.equal(set.metricsOnApiPort, false);
  });

  it('serves /metrics on the API port outside production by default, on its own port when said', () => {
    const unset = loadConfig({ NODE_ENV: 'development' }).http;
    assert.equal(unset.metricsOnApiPort, true);
    assert.equal(unset.metricsPort, undefined);
    const set = loadConfig({ NODE_ENV: 'development', METRICS_PORT: '9101' }).http;
    assert.deepEqual([set.metricsOnApiPort, set.metricsPort], [false, 9101]);
  });

  it('takes METRICS_TOKEN of 32 characters or more, and refuses a shorter one naming it', () => {
    assert.equal(loadConfig({ METRICS_TOKEN: token }).http.metricsToken, token);
    assert.equal(loadConfig({}).http.metricsToken, undefined);
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: 'too-short-a-token' }),
      (error: unknown) => error instanceof ConfigError && /METRICS_TOKEN/.test(error.message),
    );
  });
});
