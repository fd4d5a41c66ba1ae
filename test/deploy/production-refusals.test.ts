import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createTestDatabase, onPostgres } from '../helpers/database.ts';
import { freePort } from '../helpers/free-port.ts';
import { npmScript, ROOT, runService, type ServiceRun } from './support.ts';

// The refusals of decision 0026 as an operator meets them: `node src/main.ts` (and npm run migrate)
// as child processes of the pinned node, each refusal an exit 1 with a line on stderr saying why.
// Without DATABASE_URL a process runs on PGlite in its DATA_DIR, on either suite.

const MAIN = path.join(ROOT, 'src/main.ts');

type Run = ServiceRun;

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-refusals-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function run(args: string[], env: Record<string, string>): Run {
  const service = runService(args, { LOG_LEVEL: 'info', ...env });
  children.push(service.child);
  return service;
}

async function main(env: Record<string, string>): Promise<Run> {
  return run([MAIN], { PORT: String(await freePort()), ...env });
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** A production environment that loads but for what a test takes out: strong secrets, every provider. */
function productionEnv(): Record<string, string> {
  const secret = () => randomBytes(32).toString('base64url');
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://billrail@127.0.0.1:1/billrail',
    TRUST_PROXY_HOPS: '0',
    PUBLIC_BASE_URL: 'https://pay.example.com',
    VAPID_PUBLIC_KEY: secret(),
    VAPID_SUBJECT: 'mailto:ops@example.com',
    KYC_APP_ID: 'kyc-app',
    BILLS_PUBLIC_KEY: secret(),
  };
  for (const name of ['SMS', 'KYC', 'DATA_PROVIDER', 'BILLS', 'SOCIAL', 'AIRTIME_CASH'])
    env[`${name}_BASE_URL`] = `https://${name.toLowerCase()}.example.com`;
  env.KYC_LIVENESS_URL = 'https://kyc.example.com/liveness';
  for (const [provider, account] of [
    ['DATA', '058:0123456789:Data Ltd'],
    ['BILLS', '058:0123456790:Bills Ltd'],
    ['SOCIAL', '058:0123456791:Social Ltd'],
  ] as const)
    env[`${provider}_FUNDING_ACCOUNT`] = account;
  for (const name of [
    'PAYMENT_SIGNING_SECRET',
    'SECRET_PEPPER',
    'VAPID_PRIVATE_KEY',
    'SMS_API_KEY',
    'KYC_SECRET_KEY',
    'DATA_PROVIDER_TOKEN',
    'BILLS_API_KEY',
    'BILLS_SECRET_KEY',
    'SOCIAL_API_KEY',
    'AIRTIME_CASH_API_KEY',
    'ADMIN_TOTP_KEY',
  ])
    env[name] = secret();
  return env;
}

describe('one process per PGlite directory', () => {
  it('refuses a second process on the DATA_DIR, naming the first; a SIGKILLed holder blocks nothing', async () => {
    const dataDir = await tempDir();
    const first = await main({ DATA_DIR: dataDir });
    await first.started;
    const second = await main({ DATA_DIR: dataDir });
    assert.equal(await second.exited, 1, 'the second process stops');
    assert.match(second.stderr(), new RegExp(`in use by process ${first.child.pid}\\b`));
    assert.match(second.stderr(), /DATABASE_URL/, 'and says what to do instead');
    // npm run migrate on the same directory is a second process too.
    const migrate = run(npmScript('migrate').split(' ').slice(1), { DATA_DIR: dataDir });
    assert.equal(await migrate.exited, 1);
    assert.match(migrate.stderr(), new RegExp(`in use by process ${first.child.pid}\\b`));

    // Killed outright, the holder leaves its lock behind: the next start takes it over.
    await killed(first.child);
    const third = await main({ DATA_DIR: dataDir });
    await third.started;
    third.child.kill('SIGTERM');
    assert.equal(await third.exited, 0);
  });
});

describe('production without DATABASE_URL', () => {
  it('exits 1 saying that PGlite is one process with no backups', async () => {
    const { DATABASE_URL: _unset, ...env } = productionEnv();
    const refused = await main({ ...env, DATA_DIR: await tempDir() });
    assert.equal(await refused.exited, 1);
    assert.match(
      refused.stderr(),
      /^billrail: invalid DATABASE_URL: required when NODE_ENV=production.*PGlite/m,
    );
  });

  it('exits 1 naming an example secret, and TRUST_PROXY_HOPS when unsaid', async () => {
    const pepper = await main({
      ...productionEnv(),
      SECRET_PEPPER: 'compose-sandbox-pepper-not-for-production',
      DATA_DIR: await tempDir(),
    });
    assert.equal(await pepper.exited, 1);
    assert.match(pepper.stderr(), /invalid SECRET_PEPPER: .*example value/);
    const { TRUST_PROXY_HOPS: _unsaid, ...env } = productionEnv();
    const hops = await main({ ...env, DATA_DIR: await tempDir() });
    assert.equal(await hops.exited, 1);
    assert.match(hops.stderr(), /invalid TRUST_PROXY_HOPS: required when NODE_ENV=production/);
  });
});

describe('MIGRATE_ON_START=0', () => {
  it('refuses to serve on a database behind the code, naming the missing migrations; npm run migrate, then it starts', async () => {
    const env: Record<string, string> = { DATA_DIR: await tempDir(), MIGRATE_ON_START: '0' };
    if (onPostgres()) {
      const database = await createTestDatabase({ empty: true });
      cleanups.push(() => database.drop());
      assert.equal(database.target.kind, 'postgres');
      if (database.target.kind === 'postgres') {
        // The processes through one URL, the migrations through another: MIGRATION_DATABASE_URL.
        env.DATABASE_URL = database.target.url;
        env.MIGRATION_DATABASE_URL = database.target.url;
      }
    }
    const behind = await main(env);
    assert.equal(await behind.exited, 1);
    assert.match(
      behind.stderr(),
      /failed to start: the database is behind this build by \d+ migrations \(2026-11-22T1200_foundation, .*\): run npm run migrate/,
    );
    const migrate = run(npmScript('migrate').split(' ').slice(1), env);
    assert.equal(await migrate.exited, 0, migrate.stderr());
    const current = await main(env);
    await current.started;
    current.child.kill('SIGTERM');
    assert.equal(await current.exited, 0);
  });
});
