import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, sendsMaxOnPglite, sendsMaxOnPostgres } from '../src/config.ts';

// loadConfig is the only reader of the environment (API.md section 13): defaults, refusals, and a
// one-line message that names the variable at fault.

/** What a production deployment must set when the sandbox is off. */
const productionEnv = {
  NODE_ENV: 'production',
  PAYMENT_SIGNING_SECRET: 'sk_live_0123456789abcdef',
  SECRET_PEPPER: 'a-long-production-pepper-value',
  SMS_BASE_URL: 'https://sms.example.com',
  SMS_API_KEY: 'sms-api-key',
  KYC_BASE_URL: 'https://api.dojah.io',
  KYC_APP_ID: 'kyc-app',
  KYC_SECRET_KEY: 'kyc-secret',
  PUBLIC_BASE_URL: 'https://api.example.com/',
  VAPID_PUBLIC_KEY: 'BPublicKeyForTests',
  VAPID_PRIVATE_KEY: 'privateKeyForTests',
  VAPID_SUBJECT: 'mailto:ops@example.com',
  ...vtuProvidersEnv(),
};

/** The three VTU providers' endpoints, credentials and funding accounts. */
function vtuProvidersEnv() {
  return {
    DATA_PROVIDER_BASE_URL: 'https://data-vendor.example.com/',
    DATA_PROVIDER_TOKEN: 'data-token',
    DATA_FUNDING_ACCOUNT: '058:0123456780:Data Vendor Ltd',
    BILLS_BASE_URL: 'https://vtpass.com/api',
    BILLS_API_KEY: 'bills-api-key',
    BILLS_PUBLIC_KEY: 'PK_bills',
    BILLS_SECRET_KEY: 'SK_bills',
    BILLS_FUNDING_ACCOUNT: '044:0123456781:VTpass: Float',
    SOCIAL_BASE_URL: 'https://panel.example.com/api/v2',
    SOCIAL_API_KEY: 'social-key',
    SOCIAL_FUNDING_ACCOUNT: '058:0123456782:Social Panel',
    KYC_LIVENESS_URL: 'https://widget.dojah.io/liveness',
    AIRTIME_CASH_BASE_URL: 'https://airtime-cash.example/portal/api',
    AIRTIME_CASH_API_KEY: 'airtime-cash-key',
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
    assert.deepEqual(config.kyc, {
      baseUrl: 'https://api.dojah.io',
      appId: 'app',
      secretKey: 'secret',
      livenessUrl: 'https://widget.dojah.io/liveness',
    });
    assert.equal(config.vtu.data.baseUrl, 'https://data-vendor.example.com');
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

  it('reads PAYSTACK_BASE_URL, defaulting to Paystack, and refuses a bad one', () => {
    assert.equal(loadConfig({}).payments.baseUrl, 'https://api.paystack.co');
    assert.equal(
      loadConfig({ PAYSTACK_BASE_URL: 'https://paystack.example.com/v1/' }).payments.baseUrl,
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
        assert.deepEqual(config.sandboxExposedBy, [], host);
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
      assert.deepEqual(config.sandboxExposedBy, ['HOST=0.0.0.0', 'PUBLIC_BASE_URL=https://pay.example.com']);
      assert.equal(config.secrets.paymentSigning, 'sk_test_sandbox');
    });

    it('starts without the sandbox on another address when the real providers are configured', () => {
      const { NODE_ENV: _production, ...real } = productionEnv;
      const config = loadConfig({ ...real, HOST: '0.0.0.0' });
      assert.equal(config.sandbox, false);
      assert.deepEqual(config.sandboxExposedBy, []);
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
      ...(Object.keys(vtuProvidersEnv()) as Array<keyof ReturnType<typeof vtuProvidersEnv>>),
    ] as const) {
      assertRefused({ ...productionEnv, [missing]: undefined }, missing);
    }
    assertRefused({ NODE_ENV: 'production' }, 'PAYMENT_SIGNING_SECRET');
    // Present but too weak to be a real secret.
    assertRefused({ ...productionEnv, SECRET_PEPPER: 'short' }, 'SECRET_PEPPER');
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
    assert.equal(loadConfig({}).vtu.sandboxBaseUrl, undefined, "default: this service's own simulators");
    assert.equal(
      loadConfig({ SANDBOX_VTU_BASE_URL: 'http://127.0.0.1:4100/' }).vtu.sandboxBaseUrl,
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
        secretAccessKey: 'secret-key',
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
