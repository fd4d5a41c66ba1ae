import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  type Config,
  ConfigError,
  loadConfig,
  publicBaseUrl,
  type RealProviders,
  type SandboxProviders,
  sendsMaxOnPglite,
  sendsMaxOnPostgres,
} from '../src/config.ts';

// loadConfig is the only reader of the environment (API.md section 13): defaults, refusals, and a
// one-line message that names the variable at fault.

/**
 * A secret of the shape production accepts (32+ characters, 16+ distinct), told apart by its label:
 * a test that reads one back knows which it set.
 */
function strong(label: string): string {
  return `${label}_Xq7Lm2Kp9Vn4Rt8Wz3By6Cj1Hd5Fg0`;
}

/** What a production deployment must set when the sandbox is off. */
const productionEnv = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://billrail@db.internal:5432/billrail',
  TRUST_PROXY_HOPS: '1',
  PAYMENT_SIGNING_SECRET: strong('sk_live'),
  SECRET_PEPPER: strong('pepper'),
  ADMIN_TOTP_KEY: strong('admin_totp'),
  SMS_BASE_URL: 'https://sms.example.com',
  SMS_API_KEY: strong('sms'),
  KYC_BASE_URL: 'https://api.dojah.io',
  KYC_APP_ID: 'kyc-app',
  KYC_SECRET_KEY: strong('kyc'),
  PUBLIC_BASE_URL: 'https://api.example.com/',
  VAPID_PUBLIC_KEY: 'BPublicKeyForTests',
  VAPID_PRIVATE_KEY: strong('vapid'),
  VAPID_SUBJECT: 'mailto:ops@example.com',
  ...vtuProvidersEnv(),
};

/** The three VTU providers' endpoints, credentials and funding accounts. */
function vtuProvidersEnv() {
  return {
    DATA_PROVIDER_BASE_URL: 'https://data-vendor.example.com/',
    DATA_PROVIDER_TOKEN: strong('data'),
    DATA_FUNDING_ACCOUNT: '058:0123456780:Data Vendor Ltd',
    BILLS_BASE_URL: 'https://vtpass.com/api',
    BILLS_API_KEY: strong('bills_api'),
    BILLS_PUBLIC_KEY: 'PK_bills',
    BILLS_SECRET_KEY: strong('SK_bills'),
    BILLS_FUNDING_ACCOUNT: '044:0123456781:VTpass: Float',
    SOCIAL_BASE_URL: 'https://panel.example.com/api/v2',
    SOCIAL_API_KEY: strong('social'),
    SOCIAL_FUNDING_ACCOUNT: '058:0123456782:Social Panel',
    KYC_LIVENESS_URL: 'https://widget.dojah.io/liveness',
    AIRTIME_CASH_BASE_URL: 'https://airtime-cash.example/portal/api',
    AIRTIME_CASH_API_KEY: strong('airtime_cash'),
  };
}

/** Asserts that loading env throws a ConfigError whose single line names the variable. */
function assertRefused(env: Record<string, string | undefined>, variable: string): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      assert.equal(error.name, 'ConfigError');
      assert.doesNotMatch(error.message, /\n/, 'one line');
      assert.match(error.message, new RegExp(`\\b${variable}\\b`), error.message);
      return true;
    },
  );
}

/** The real providers' settings of a configuration with the sandbox off. */
function real(config: Config): RealProviders {
  assert.equal(config.providers.mode, 'real');
  assert.equal(config.sandbox, false);
  return config.providers as RealProviders;
}

/** The sandbox's settings of a configuration with the sandbox on. */
function sandboxOf(config: Config): SandboxProviders {
  assert.equal(config.providers.mode, 'sandbox');
  assert.equal(config.sandbox, true);
  return config.providers as SandboxProviders;
}

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.env, 'development');
    assert.equal(config.http.port, 3000);
    assert.equal(config.http.host, '127.0.0.1');
    assert.equal(config.http.publicBaseUrl, undefined);
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.database.url, undefined);
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.sandbox, true);
    assert.equal(config.secrets.paymentSigning, 'sk_test_sandbox');
    assert.equal(typeof config.secrets.pepper, 'string');
    assert.ok(config.secrets.pepper.length >= 16);
    assert.deepEqual(config.adminPhones, []);
    assert.equal(config.rateLimitPerMinute, 120);
    assert.equal(config.runWorker, true);
    assert.equal(config.vtu.sendsMax, sendsMaxOnPglite);
  });

  it('keeps the sandbox on in test and treats blank variables as unset', () => {
    assert.equal(loadConfig({ NODE_ENV: 'test' }).sandbox, true);
    const blank = loadConfig({ PORT: '', HOST: '', DATABASE_URL: '', SANDBOX: '' });
    assert.equal(blank.http.port, 3000);
    assert.equal(blank.http.host, '127.0.0.1');
    assert.equal(blank.database.url, undefined);
    assert.equal(blank.sandbox, true);
  });

  it('reads CORS_ORIGINS as a list of whole origins, and refuses anything else', () => {
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(
      loadConfig({ CORS_ORIGINS: ' https://app.example.com , http://localhost:5173,' }).corsOrigins,
      ['https://app.example.com', 'http://localhost:5173'],
    );
    // A browser's Origin header never has a path, a trailing slash or an upper-case host, so such an
    // entry would match nothing: it is refused rather than ignored.
    for (const bad of [
      'https://app.example.com/',
      'https://app.example.com/app',
      'https://App.example.com',
      'app.example.com',
      'ftp://app.example.com',
      '*',
    ]) {
      assertRefused({ CORS_ORIGINS: bad }, 'CORS_ORIGINS');
    }
  });

  it('reads the variables it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://user@db.internal:5432/billrail',
      REDIS_URL: 'redis://cache:6379',
      RATE_LIMIT_PER_MINUTE: '30',
      ADMIN_PHONES: ' 08031234567 , +2348037654321,',
      PUBLIC_BASE_URL: 'https://sandbox.example.com//',
      SANDBOX: '0',
      VAPID_PUBLIC_KEY: 'BPublicKeyForTests',
      VAPID_PRIVATE_KEY: 'privateKeyForTests',
      VAPID_SUBJECT: 'https://example.com/contact',
      PAYMENT_SIGNING_SECRET: 'sk_live_0123456789abcdef',
      SECRET_PEPPER: 'a-long-production-pepper-value',
      SMS_BASE_URL: 'https://sms.example.com',
      SMS_API_KEY: 'key',
      KYC_BASE_URL: 'https://api.dojah.io/',
      KYC_APP_ID: 'app',
      KYC_SECRET_KEY: 'secret',
      ...vtuProvidersEnv(),
      DATA_PROVIDER_NETWORK_IDS: 'mtn=1,glo=3,9mobile=2,airtel=4',
      SOCIAL_KOBO_PER_USD: '160000',
      VTU_TIMEOUT_MS: '15000',
    });
    assert.deepEqual(real(config).kyc, {
      baseUrl: 'https://api.dojah.io',
      appId: 'app',
      secretKey: 'secret',
      livenessUrl: 'https://widget.dojah.io/liveness',
    });
    assert.equal(config.kyc.livenessUrl, 'https://widget.dojah.io/liveness');
    assert.equal(real(config).data.baseUrl, 'https://data-vendor.example.com');
    assert.deepEqual(config.vtu.data.networkIds, { mtn: 1, glo: 3, '9mobile': 2, airtel: 4 });
    // The account name keeps any colon after the first two fields.
    assert.deepEqual(config.vtu.bills.funding, {
      bankCode: '044',
      accountNumber: '0123456781',
      accountName: 'VTpass: Float',
    });
    assert.equal(config.vtu.social.koboPerUsd, 160_000n);
    assert.equal(config.vtu.timeoutMs, 15_000);
    // PostgreSQL runs the claims and settlements of many sends side by side: a larger bound.
    assert.equal(config.vtu.sendsMax, sendsMaxOnPostgres);
    assert.equal(loadConfig({ VTU_SENDS_MAX: '24' }).vtu.sendsMax, 24);
    assert.equal(config.http.port, 8080);
    assert.equal(config.http.host, '0.0.0.0');
    assert.equal(config.database.url, 'postgres://user@db.internal:5432/billrail');
    assert.equal(config.redisUrl, 'redis://cache:6379');
    assert.equal(config.rateLimitPerMinute, 30);
    assert.deepEqual(config.adminPhones, ['08031234567', '+2348037654321']);
    assert.equal(config.http.publicBaseUrl, 'https://sandbox.example.com');
    assert.equal(config.sandbox, false);
    assert.equal(config.secrets.paymentSigning, 'sk_live_0123456789abcdef');
  });

  it('gives the real providers every setting they need, and the sandbox none of them', () => {
    const providers = real(loadConfig(productionEnv));
    assert.deepEqual(providers.vapid, {
      keys: { publicKey: 'BPublicKeyForTests', privateKey: strong('vapid') },
      subject: 'mailto:ops@example.com',
    });
    assert.deepEqual(providers.bills, {
      baseUrl: 'https://vtpass.com/api',
      apiKey: strong('bills_api'),
      publicKey: 'PK_bills',
      secretKey: strong('SK_bills'),
    });
    assert.deepEqual(providers.airtimeCash, {
      baseUrl: 'https://airtime-cash.example/portal/api',
      apiKey: strong('airtime_cash'),
    });
    assert.deepEqual(providers.social, {
      baseUrl: 'https://panel.example.com/api/v2',
      apiKey: strong('social'),
    });
    assert.deepEqual(providers.data, { baseUrl: 'https://data-vendor.example.com', token: strong('data') });
    const sandbox = sandboxOf(loadConfig({}));
    assert.deepEqual(Object.keys(sandbox).sort(), [
      'exposedBy',
      'fundingAccounts',
      'mode',
      'remote',
      'vapid',
      'vtuBaseUrl',
    ]);
    assert.deepEqual(sandbox.vapid, { keys: undefined, subject: 'mailto:sandbox@billrail.invalid' });
    assert.deepEqual(sandbox.fundingAccounts.data, {
      bankCode: '058',
      accountNumber: '9900000010',
      accountName: 'Sandbox Data Vendor',
    });
  });

  it("reads the outside parties' timeouts with their bounds and defaults", () => {
    const defaults = loadConfig({});
    assert.equal(defaults.sms.timeoutMs, 5_000);
    assert.equal(defaults.kyc.timeoutMs, 8_000);
    assert.equal(defaults.payments.timeoutMs, 8_000);
    assert.equal(defaults.mail.timeoutMs, 10_000);
    const set = loadConfig({
      SMS_TIMEOUT_MS: '2500',
      KYC_TIMEOUT_MS: '12000',
      PAYSTACK_TIMEOUT_MS: '9000',
      MAIL_TIMEOUT_MS: '30000',
    });
    assert.deepEqual(
      [set.sms.timeoutMs, set.kyc.timeoutMs, set.payments.timeoutMs, set.mail.timeoutMs],
      [2_500, 12_000, 9_000, 30_000],
    );
    for (const name of ['SMS_TIMEOUT_MS', 'KYC_TIMEOUT_MS', 'PAYSTACK_TIMEOUT_MS', 'MAIL_TIMEOUT_MS']) {
      for (const value of ['99', '1.5', 'soon', '60001']) assertRefused({ [name]: value }, name);
    }
    // A call made while a client waits stays under the 30 s request limit.
    assertRefused({ KYC_TIMEOUT_MS: '30000' }, 'KYC_TIMEOUT_MS');
    assertRefused({ PAYSTACK_TIMEOUT_MS: '30000' }, 'PAYSTACK_TIMEOUT_MS');
    const standalone = {
      SANDBOX_URL: 'http://127.0.0.1:4010/',
      SANDBOX_CLOCK_TOKEN: 'a-clock-token-of-16+',
      VAPID_PUBLIC_KEY: 'BPublicKeyForTests',
      VAPID_PRIVATE_KEY: 'privateKeyForTests',
    };
    assert.deepEqual(sandboxOf(loadConfig(standalone)).remote, {
      url: 'http://127.0.0.1:4010',
      clockToken: 'a-clock-token-of-16+',
      clockPollMs: 1_000,
      startTimeoutMs: 30_000,
    });
    const remote = sandboxOf(
      loadConfig({ ...standalone, SANDBOX_CLOCK_POLL_MS: '250', SANDBOX_START_TIMEOUT_MS: '5000' }),
    ).remote;
    assert.deepEqual([remote?.clockPollMs, remote?.startTimeoutMs], [250, 5_000]);
    assertRefused({ ...standalone, SANDBOX_CLOCK_POLL_MS: '50' }, 'SANDBOX_CLOCK_POLL_MS');
    assertRefused({ ...standalone, SANDBOX_START_TIMEOUT_MS: '999' }, 'SANDBOX_START_TIMEOUT_MS');
  });

  it('knows the public base URL before anything listens: PUBLIC_BASE_URL, else the listener', () => {
    assert.equal(publicBaseUrl(loadConfig({}).http), 'http://127.0.0.1:3000');
    assert.equal(
      publicBaseUrl(loadConfig({ PUBLIC_BASE_URL: 'https://pay.example.com/', SANDBOX: '1' }).http),
      'https://pay.example.com',
    );
    assert.equal(
      publicBaseUrl(loadConfig({ PORT: '8080', HOST: 'localhost' }).http),
      'http://localhost:8080',
    );
    // A wildcard listener is reached on loopback from this machine (the sandbox calls itself there).
    assert.equal(publicBaseUrl(loadConfig({ HOST: '0.0.0.0', SANDBOX: '1' }).http), 'http://127.0.0.1:3000');
    assert.equal(publicBaseUrl(loadConfig({ HOST: '::', SANDBOX: '1' }).http), 'http://[::1]:3000');
    assert.equal(publicBaseUrl(loadConfig({ HOST: '::1' }).http), 'http://[::1]:3000');
  });

  it('reads PAYSTACK_BASE_URL, defaulting to Paystack, and refuses a bad one', () => {
    assert.equal(real(loadConfig(productionEnv)).payments.baseUrl, 'https://api.paystack.co');
    assert.equal(
      real(loadConfig({ ...productionEnv, PAYSTACK_BASE_URL: 'https://paystack.example.com/v1/' })).payments
        .baseUrl,
      'https://paystack.example.com/v1',
    );
    assertRefused({ PAYSTACK_BASE_URL: 'not a url' }, 'PAYSTACK_BASE_URL');
    assertRefused({ PAYSTACK_BASE_URL: 'ftp://paystack.example.com' }, 'PAYSTACK_BASE_URL');
  });

  it('refuses a bad PORT, naming it', () => {
    for (const value of ['abc', '-1', '65536', '80.5', 'eighty']) assertRefused({ PORT: value }, 'PORT');
  });

  it('refuses a bad DATABASE_URL, naming it', () => {
    for (const value of ['not a url', 'mysql://db/billrail', 'http://db:5432/billrail', 'postgres']) {
      assertRefused({ DATABASE_URL: value }, 'DATABASE_URL');
    }
  });

  it('refuses a bad RATE_LIMIT_PER_MINUTE, naming it', () => {
    for (const value of ['0', '-5', 'many', '1.5', '1000001']) {
      assertRefused({ RATE_LIMIT_PER_MINUTE: value }, 'RATE_LIMIT_PER_MINUTE');
    }
  });

  it('refuses other bad values, naming them', () => {
    assertRefused({ NODE_ENV: 'staging' }, 'NODE_ENV');
    assertRefused({ SANDBOX: 'yes' }, 'SANDBOX');
    assertRefused({ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL');
    assertRefused({ DATA_FUNDING_ACCOUNT: '0123456789' }, 'DATA_FUNDING_ACCOUNT');
    assertRefused({ DATA_PROVIDER_NETWORK_IDS: 'mtn=one' }, 'DATA_PROVIDER_NETWORK_IDS');
    assertRefused({ VTU_TIMEOUT_MS: '10' }, 'VTU_TIMEOUT_MS');
    assertRefused({ VTU_SENDS_MAX: '0' }, 'VTU_SENDS_MAX');
    assertRefused({ SOCIAL_KOBO_PER_USD: '0' }, 'SOCIAL_KOBO_PER_USD');
    assertRefused({ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL');
  });

  it('reads the markup maxima in naira and percent, with their defaults, and refuses bad ones', () => {
    assert.deepEqual(loadConfig({}).vtu.markupMax, { flatKobo: 1_000_000n, percentBp: 5_000 });
    assert.deepEqual(loadConfig({ VTU_MARKUP_FLAT_MAX: '250', VTU_MARKUP_PERCENT_MAX: '10' }).vtu.markupMax, {
      flatKobo: 25_000n,
      percentBp: 1_000,
    });
    for (const value of ['-1', '1.5', 'lots'])
      assertRefused({ VTU_MARKUP_FLAT_MAX: value }, 'VTU_MARKUP_FLAT_MAX');
    for (const value of ['101', '-1', '2.5']) {
      assertRefused({ VTU_MARKUP_PERCENT_MAX: value }, 'VTU_MARKUP_PERCENT_MAX');
    }
  });

  it('reads the savings and growth settings in naira, days and percent, with the defaults of API.md section 9', () => {
    const defaults = loadConfig({});
    assert.deepEqual(defaults.savings, {
      lockMinKobo: 10_000n,
      lockMaxKobo: 1_000_000_000n,
      daysMin: 7,
      daysMax: 365,
      breakPenaltyBp: 500n,
      milestonesKobo: [1_000_000n, 5_000_000n, 10_000_000n, 50_000_000n, 100_000_000n],
    });
    assert.deepEqual(defaults.growth, {
      checkinRewardKobo: 1_000n,
      checkinWithdrawMinKobo: 10_000n,
      referralBonusKobo: 20_000n,
    });
    const set = loadConfig({
      SAVINGS_LOCK_MIN: '50.5',
      SAVINGS_BREAK_PENALTY_PERCENT: '2.55',
      SAVINGS_MILESTONES: '500,100,500',
      CHECKIN_REWARD: '12.5',
      REFERRAL_BONUS: '1000',
    });
    assert.equal(set.savings.lockMinKobo, 5_050n);
    assert.equal(set.savings.breakPenaltyBp, 255n, 'not 254 (2.55 × 100 in floating point)');
    assert.deepEqual(set.savings.milestonesKobo, [10_000n, 50_000n], 'sorted, each once');
    assert.equal(set.growth.checkinRewardKobo, 1_250n);
    assert.equal(set.growth.referralBonusKobo, 100_000n);
    for (const value of ['0', '-1', '1.234', 'lots'])
      assertRefused({ CHECKIN_REWARD: value }, 'CHECKIN_REWARD');
    for (const value of ['101', '100.01', '-1', '2.555', '1e1']) {
      assertRefused({ SAVINGS_BREAK_PENALTY_PERCENT: value }, 'SAVINGS_BREAK_PENALTY_PERCENT');
    }
    for (const value of ['10k', '10000,', '-5'])
      assertRefused({ SAVINGS_MILESTONES: value }, 'SAVINGS_MILESTONES');
    assertRefused({ SAVINGS_DAYS_MIN: '30', SAVINGS_DAYS_MAX: '10' }, 'SAVINGS_DAYS_MIN');
    assertRefused({ SAVINGS_LOCK_MIN: '500', SAVINGS_LOCK_MAX: '100' }, 'SAVINGS_LOCK_MIN');
  });

  it('reads the Web Push settings, requires the VAPID keys outside the sandbox, and refuses bad ones', () => {
    const defaults = loadConfig({});
    assert.deepEqual(defaults.push, {
      allowedHosts: [
        'fcm.googleapis.com',
        'updates.push.services.mozilla.com',
        '*.push.apple.com',
        '*.notify.windows.com',
      ],
      timeoutMs: 10_000,
    });
    assert.deepEqual(
      loadConfig({ PUSH_ALLOWED_HOSTS: 'push.example.com,*.push.example.net' }).push.allowedHosts,
      ['push.example.com', '*.push.example.net'],
    );
    for (const value of ['https://fcm.googleapis.com', 'a b', '*.'])
      assertRefused({ PUSH_ALLOWED_HOSTS: value }, 'PUSH_ALLOWED_HOSTS');
    for (const value of ['ops@example.com', 'http://example.com'])
      assertRefused({ VAPID_SUBJECT: value }, 'VAPID_SUBJECT');
    for (const name of ['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY', 'VAPID_SUBJECT']) {
      assertRefused({ ...productionEnv, [name]: undefined }, name);
    }
  });

  describe('the sandbox by default only on loopback (issue 25)', () => {
    it('is on by default while the service listens on loopback alone', () => {
      for (const host of [
        '127.0.0.1',
        '127.8.9.10',
        '::1',
        '[::1]',
        'localhost',
        'LOCALHOST',
        '::ffff:127.0.0.1',
      ]) {
        const config = loadConfig({ HOST: host });
        assert.equal(config.sandbox, true, host);
        assert.deepEqual(sandboxOf(config).exposedBy, [], host);
      }
      assert.equal(loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3000' }).sandbox, true);
      assert.equal(loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:3000/' }).sandbox, true);
    });

    it('refuses to start a sandbox nobody asked for on any other address, saying why and what to set', () => {
      for (const env of [
        { HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://pay.example.com' },
        { HOST: '0.0.0.0' },
        { HOST: '::' },
        { HOST: '10.1.2.3' },
        { HOST: 'pay.example.com' },
        { HOST: '128.0.0.1' },
        // A loopback listener behind a public proxy is reachable by everyone too.
        { HOST: '127.0.0.1', PUBLIC_BASE_URL: 'https://pay.example.com' },
      ]) {
        assert.throws(
          () => loadConfig(env),
          (error: unknown) => {
            assert.ok(error instanceof ConfigError, String(error));
            assert.doesNotMatch(error.message, /\n/, 'one line');
            // The first setting the sandbox would have supplied, why it is missing, and the two ways out.
            assert.match(error.message, /^invalid PAYMENT_SIGNING_SECRET: required when SANDBOX is off/);
            assert.match(error.message, /on by default only while the service listens on loopback alone/);
            assert.match(error.message, /set SANDBOX=1/);
            assert.match(error.message, /configure the real providers/);
            const named =
              env.HOST !== '127.0.0.1' ? `HOST=${env.HOST}` : 'PUBLIC_BASE_URL=https://pay.example.com';
            assert.ok(error.message.includes(named), error.message);
            return true;
          },
          JSON.stringify(env),
        );
      }
    });

    it('runs it on another address when SANDBOX=1 is said, naming what exposes it for the warning', () => {
      const config = loadConfig({
        HOST: '0.0.0.0',
        PUBLIC_BASE_URL: 'https://pay.example.com',
        SANDBOX: '1',
      });
      assert.equal(config.sandbox, true);
      assert.deepEqual(sandboxOf(config).exposedBy, [
        'HOST=0.0.0.0',
        'PUBLIC_BASE_URL=https://pay.example.com',
      ]);
      assert.equal(config.secrets.paymentSigning, 'sk_test_sandbox');
    });

    it('starts without the sandbox on another address when the real providers are configured', () => {
      const { NODE_ENV: _production, ...realEnv } = productionEnv;
      const config = loadConfig({ ...realEnv, HOST: '0.0.0.0' });
      assert.equal(real(config).sms.baseUrl, 'https://sms.example.com');
      // Said explicitly, the plain message: no guess at what was meant.
      assert.throws(
        () => loadConfig({ HOST: '0.0.0.0', SANDBOX: '0' }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message === 'invalid PAYMENT_SIGNING_SECRET: required when SANDBOX is off',
      );
    });
  });

  it('turns the sandbox off in production and refuses SANDBOX=1 there', () => {
    assert.equal(loadConfig(productionEnv).sandbox, false);
    assertRefused({ ...productionEnv, SANDBOX: '1' }, 'SANDBOX');
    assertRefused({ ...productionEnv, SANDBOX: 'true' }, 'SANDBOX');
  });

  it('refuses production without its secrets and SMS settings, naming the missing one', () => {
    for (const missing of [
      'PAYMENT_SIGNING_SECRET',
      'SECRET_PEPPER',
      'SMS_BASE_URL',
      'SMS_API_KEY',
      'KYC_BASE_URL',
      'KYC_APP_ID',
      'KYC_SECRET_KEY',
      'PUBLIC_BASE_URL',
      // The key of the admins' TOTP secrets, with ADMIN_SECOND_FACTOR=totp (production's default).
      'ADMIN_TOTP_KEY',
      ...(Object.keys(vtuProvidersEnv()) as Array<keyof ReturnType<typeof vtuProvidersEnv>>),
    ] as const) {
      assertRefused({ ...productionEnv, [missing]: undefined }, missing);
    }
    assertRefused({ NODE_ENV: 'production' }, 'PAYMENT_SIGNING_SECRET');
    // Present but too weak to be a real secret.
    assertRefused({ ...productionEnv, SECRET_PEPPER: 'short' }, 'SECRET_PEPPER');
    // Without a second factor for the admins, no key to seal their secrets under is needed.
    const { ADMIN_TOTP_KEY: _key, ...withoutKey } = productionEnv;
    assert.equal(loadConfig({ ...withoutKey, ADMIN_SECOND_FACTOR: 'none' }).adminSecondFactor.mode, 'none');
    assert.equal(
      loadConfig(productionEnv).adminSecondFactor.mode,
      'totp',
      'totp by default outside the sandbox',
    );
  });

  it('refuses the sandbox signing secret outside the sandbox', () => {
    assertRefused({ ...productionEnv, PAYMENT_SIGNING_SECRET: 'sk_test_sandbox' }, 'PAYMENT_SIGNING_SECRET');
    const { PUBLIC_BASE_URL: _unused, ...rest } = productionEnv;
    assertRefused(
      { ...rest, NODE_ENV: 'development', SANDBOX: '0', PAYMENT_SIGNING_SECRET: 'sk_test_sandbox' },
      'PAYMENT_SIGNING_SECRET',
    );
    // Inside the sandbox it is the default, and setting it explicitly is fine.
    assert.equal(
      loadConfig({ PAYMENT_SIGNING_SECRET: 'sk_test_sandbox' }).secrets.paymentSigning,
      'sk_test_sandbox',
    );
  });

  it('refuses the sandbox pepper outside the sandbox', () => {
    assertRefused({ ...productionEnv, SECRET_PEPPER: 'sandbox-pepper-not-for-production' }, 'SECRET_PEPPER');
  });

  it('reads SANDBOX_VTU_BASE_URL in the sandbox only, and refuses a bad one', () => {
    assert.equal(sandboxOf(loadConfig({})).vtuBaseUrl, undefined, "default: this service's own simulators");
    assert.equal(
      sandboxOf(loadConfig({ SANDBOX_VTU_BASE_URL: 'http://127.0.0.1:4100/' })).vtuBaseUrl,
      'http://127.0.0.1:4100',
    );
    for (const value of ['not a url', 'ftp://127.0.0.1:4100'])
      assertRefused({ SANDBOX_VTU_BASE_URL: value }, 'SANDBOX_VTU_BASE_URL');
    // Outside the sandbox the real providers are configured; a simulator address there is a mistake.
    assertRefused(
      { ...productionEnv, SANDBOX_VTU_BASE_URL: 'http://127.0.0.1:4100' },
      'SANDBOX_VTU_BASE_URL',
    );
  });

  it('keeps documents in the local directory unless S3_BUCKET is set', () => {
    assert.deepEqual(loadConfig({}).storage, { kind: 'local' });
    assert.deepEqual(loadConfig(productionEnv).storage, { kind: 'local' });
  });

  it('reads the S3 settings when S3_BUCKET is set, with their defaults', () => {
    const s3 = {
      S3_BUCKET: 'billrail-kyc',
      S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'secret-key',
    };
    assert.deepEqual(loadConfig(s3).storage, {
      kind: 's3',
      bucket: 'billrail-kyc',
      region: 'us-east-1',
      endpoint: undefined,
      forcePathStyle: false,
      accessKeyId: 'AKIAEXAMPLE',
      secretAccessKey: 'secret-key',
    });
    assert.deepEqual(
      loadConfig({
        ...productionEnv,
        ...s3,
        S3_SECRET_ACCESS_KEY: strong('s3'),
        S3_REGION: 'eu-west-2',
        S3_ENDPOINT: 'http://minio.internal:9000',
        S3_FORCE_PATH_STYLE: '1',
      }).storage,
      {
        kind: 's3',
        bucket: 'billrail-kyc',
        region: 'eu-west-2',
        endpoint: 'http://minio.internal:9000',
        forcePathStyle: true,
        accessKeyId: 'AKIAEXAMPLE',
        secretAccessKey: strong('s3'),
      },
    );
    const explicitOff = loadConfig({ ...s3, S3_FORCE_PATH_STYLE: '0' }).storage;
    assert.equal(explicitOff.kind === 's3' && explicitOff.forcePathStyle, false);
  });

  it('refuses S3_BUCKET without its credentials, naming the missing one', () => {
    const s3 = {
      S3_BUCKET: 'billrail-kyc',
      S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'secret-key',
    };
    assertRefused({ ...s3, S3_ACCESS_KEY_ID: undefined }, 'S3_ACCESS_KEY_ID');
    assertRefused({ ...s3, S3_SECRET_ACCESS_KEY: '' }, 'S3_SECRET_ACCESS_KEY');
    assertRefused({ ...productionEnv, S3_BUCKET: 'billrail-kyc' }, 'S3_ACCESS_KEY_ID');
  });

  it('refuses S3 settings without S3_BUCKET, and bad S3 values, naming them', () => {
    assertRefused({ S3_ACCESS_KEY_ID: 'AKIAEXAMPLE', S3_SECRET_ACCESS_KEY: 'secret-key' }, 'S3_BUCKET');
    assertRefused({ S3_ENDPOINT: 'http://minio.internal:9000' }, 'S3_BUCKET');
    const s3 = {
      S3_BUCKET: 'billrail-kyc',
      S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      S3_SECRET_ACCESS_KEY: 'secret-key',
    };
    for (const value of ['not a url', 'ftp://minio.internal', 'minio.internal:9000']) {
      assertRefused({ ...s3, S3_ENDPOINT: value }, 'S3_ENDPOINT');
    }
    for (const value of ['yes', '2', 'path'])
      assertRefused({ ...s3, S3_FORCE_PATH_STYLE: value }, 'S3_FORCE_PATH_STYLE');
  });
});

describe('production fails closed (decision 0026)', () => {
  it('refuses production without DATABASE_URL, saying why; PGlite stays the default elsewhere', () => {
    assertRefused({ ...productionEnv, DATABASE_URL: undefined }, 'DATABASE_URL');
    assert.throws(() => loadConfig({ ...productionEnv, DATABASE_URL: undefined }), /PGlite.*no backups/);
    assert.equal(loadConfig({}).database.url, undefined);
    const { NODE_ENV: _production, PUBLIC_BASE_URL: _url, DATABASE_URL: _db, ...rest } = productionEnv;
    assert.equal(loadConfig({ ...rest, SANDBOX: '0' }).database.url, undefined, 'outside production');
  });

  it('refuses to guess TRUST_PROXY_HOPS in production, 0 included when said; 0 by default elsewhere', () => {
    assertRefused({ ...productionEnv, TRUST_PROXY_HOPS: undefined }, 'TRUST_PROXY_HOPS');
    assert.equal(loadConfig({ ...productionEnv, TRUST_PROXY_HOPS: '0' }).http.trustProxyHops, 0);
    assert.equal(loadConfig({ ...productionEnv, TRUST_PROXY_HOPS: '2' }).http.trustProxyHops, 2);
    assert.equal(loadConfig({}).http.trustProxyHops, 0);
    assertRefused({ ...productionEnv, TRUST_PROXY_HOPS: '-1' }, 'TRUST_PROXY_HOPS');
  });

  const secretNames = [
    'PAYMENT_SIGNING_SECRET',
    'SECRET_PEPPER',
    'VAPID_PRIVATE_KEY',
    'DATA_PROVIDER_TOKEN',
    'BILLS_API_KEY',
    'BILLS_SECRET_KEY',
    'SOCIAL_API_KEY',
    'AIRTIME_CASH_API_KEY',
    'KYC_SECRET_KEY',
    'SMS_API_KEY',
    'S3_SECRET_ACCESS_KEY',
    'SANDBOX_CLOCK_TOKEN',
    'METRICS_TOKEN',
  ] as const;
  /** Production with one secret set to a value: S3's needs its bucket, the optional ones nothing. */
  const withSecret = (name: string, value: string) => ({
    ...productionEnv,
    ...(name === 'S3_SECRET_ACCESS_KEY'
      ? { S3_BUCKET: 'billrail-kyc', S3_ACCESS_KEY_ID: 'AKIAEXAMPLE' }
      : {}),
    [name]: value,
  });
  /** Asserts the refusal names the variable and the rule. */
  const refusedFor = (env: Record<string, string | undefined>, name: string, rule: RegExp) => {
    assertRefused(env, name);
    assert.throws(() => loadConfig(env), rule);
  };

  it('accepts a strong value for each secret', () => {
    for (const name of secretNames) loadConfig(withSecret(name, strong(name.toLowerCase())));
  });

  it("refuses each secret set to a value printed in the project's files, naming it and the rule", () => {
    const examples = [
      'REPLACE_ME',
      'REPLACE_ME_openssl_rand_hex_32_same_on_every_process',
      'REPLACE_ME_sk_live_from_the_payment_provider',
      // compose.yaml's sandbox demo: its pepper and its published VAPID private key.
      'compose-sandbox-pepper-not-for-production',
      '53X4tG0IhM2wnnCsKs182MTG1nlyEvjmlj7yEDLgleA',
      // The sandbox data vendor's token: 40 hex digits that pass the other rules.
      '5d1a7c0e9b3f4a6d8e2c1b0a9f8e7d6c5b4a3f2e',
    ];
    // A short one may meet the schema's own minimum first (SECRET_PEPPER's 16): refused all the same.
    for (const name of secretNames)
      for (const value of examples)
        refusedFor(withSecret(name, value), name, value.length >= 32 ? /example value printed/ : /./);
  });

  it('refuses each secret shorter than 32 characters', () => {
    for (const name of secretNames)
      refusedFor(
        withSecret(name, strong('x').slice(0, 31)),
        name,
        // METRICS_TOKEN's schema says the same first: at least 32.
        /shorter than 32 characters|expected string to have >=32 characters/,
      );
  });

  it('refuses each secret of fewer than 16 distinct characters (10 when it is hex alone)', () => {
    for (const name of secretNames) {
      refusedFor(
        withSecret(name, 'abcdefghijklmno'.repeat(3)),
        name,
        /15 distinct characters, fewer than 16/,
      );
      refusedFor(withSecret(name, '012345678'.repeat(4)), name, /fewer than 10 for hex/);
    }
    // A provider's 32-digit hex key seldom shows all 16 digits: 14 of them is a real key.
    loadConfig(withSecret('BILLS_API_KEY', '9f3c1a7e5b2d8c4f6a0e1b3d5f7a9c2e'));
  });

  it('leaves secrets to the sandbox and development as they were', () => {
    assert.equal(loadConfig({ SECRET_PEPPER: 'compose-sandbox-pepper-not-for-production' }).sandbox, true);
    const { NODE_ENV: _production, PUBLIC_BASE_URL: _url, ...rest } = productionEnv;
    loadConfig({ ...rest, SANDBOX: '0', SMS_API_KEY: 'REPLACE_ME' });
  });

  it('migrates on start outside production and not in it, unless said; migrations to MIGRATION_DATABASE_URL', () => {
    assert.equal(loadConfig({}).database.migrateOnStart, true);
    assert.equal(loadConfig({ NODE_ENV: 'test' }).database.migrateOnStart, true);
    assert.equal(loadConfig(productionEnv).database.migrateOnStart, false);
    assert.equal(loadConfig({ ...productionEnv, MIGRATE_ON_START: '1' }).database.migrateOnStart, true);
    assert.equal(loadConfig({ MIGRATE_ON_START: '0' }).database.migrateOnStart, false);
    assertRefused({ MIGRATE_ON_START: 'yes' }, 'MIGRATE_ON_START');
    assert.equal(loadConfig(productionEnv).database.migrationUrl, productionEnv.DATABASE_URL);
    const direct = 'postgres://billrail@db-primary.internal:5432/billrail';
    assert.equal(
      loadConfig({ ...productionEnv, MIGRATION_DATABASE_URL: direct }).database.migrationUrl,
      direct,
    );
    assert.equal(loadConfig({}).database.migrationUrl, undefined, 'PGlite: the process migrates its own');
    assertRefused(
      { ...productionEnv, MIGRATION_DATABASE_URL: 'https://db.internal' },
      'MIGRATION_DATABASE_URL',
    );
  });
});

describe('the USSD channel’s settings (API.md 17.6)', () => {
  it('defaults to the CBN USSD limits in kobo and the service code, with a random token in the sandbox', () => {
    const first = loadConfig({ SANDBOX: '1' }).ussd;
    assert.equal(first.serviceCode, '*384*2255#');
    assert.equal(first.singleMaxKobo, 2_000_000n);
    assert.equal(first.dailyMaxKobo, 10_000_000n);
    assert.equal(first.allowedIps, undefined, 'any address by default');
    assert.match(first.callbackToken ?? '', /^[A-Za-z0-9_-]{32}$/, 'npm start needs nothing set');
    assert.notEqual(loadConfig({ SANDBOX: '1' }).ussd.callbackToken, first.callbackToken, 'made at random');
    const set = loadConfig({
      SANDBOX: '1',
      USSD_CALLBACK_TOKEN: 'a-token-of-the-sandbox',
      USSD_SINGLE_MAX: '5000.50',
    });
    assert.equal(set.ussd.callbackToken, 'a-token-of-the-sandbox');
    assert.equal(set.ussd.singleMaxKobo, 500_050n);
  });

  it('is off in production without a token, and refuses a weak or published one there', () => {
    assert.equal(loadConfig(productionEnv).ussd.callbackToken, undefined);
    const token = strong('ussd');
    assert.equal(loadConfig({ ...productionEnv, USSD_CALLBACK_TOKEN: token }).ussd.callbackToken, token);
    assertRefused(
      { ...productionEnv, USSD_CALLBACK_TOKEN: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
      'USSD_CALLBACK_TOKEN',
    );
    assertRefused({ ...productionEnv, USSD_CALLBACK_TOKEN: 'short-but-16-chars' }, 'USSD_CALLBACK_TOKEN');
    assertRefused({ SANDBOX: '1', USSD_CALLBACK_TOKEN: 'not/a/path/segment/at/all' }, 'USSD_CALLBACK_TOKEN');
  });

  it('reads USSD_ALLOWED_IPS as addresses and CIDR ranges, refusing anything else', () => {
    const list = loadConfig({
      SANDBOX: '1',
      USSD_ALLOWED_IPS: '52.48.80.0/24, 196.201.214.136,2001:db8::/32',
    }).ussd.allowedIps;
    assert.ok(list !== undefined);
    assert.ok(list.allows('52.48.80.7'));
    assert.ok(list.allows('196.201.214.136'));
    assert.ok(list.allows('::ffff:52.48.80.9'), 'an IPv4-mapped address is judged as its IPv4');
    assert.ok(list.allows('2001:db8:1::5'));
    assert.ok(!list.allows('52.48.81.7'));
    assert.ok(!list.allows('127.0.0.1'));
    assert.ok(!list.allows('not-an-address'));
    for (const bad of ['52.48.80.0/33', 'gateway.example.com', '1.2.3.4/8/1', '1.2.3.4/x'])
      assertRefused({ SANDBOX: '1', USSD_ALLOWED_IPS: bad }, 'USSD_ALLOWED_IPS');
    assertRefused({ SANDBOX: '1', USSD_SERVICE_CODE: '384*2255' }, 'USSD_SERVICE_CODE');
  });
});
