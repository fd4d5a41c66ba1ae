import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { vtuProviderNames } from '../../src/config.ts';
import { type DatabaseTarget, openDatabase } from '../../src/db/database.ts';
import { systemAccounts, userAccountKinds } from '../../src/ledger/accounts.ts';
import { checkLedger, type LedgerCheck } from '../../src/ledger/check.ts';
import { post } from '../../src/ledger/postings.ts';
import { createTestDatabase, onPostgres } from '../helpers/database.ts';
import {
  balanceOf,
  createUser,
  type LedgerDatabase,
  now,
  openLedgerDatabase,
  savings,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

const { collectionsPool, vtuInFlight, revenueMarkup } = systemAccounts;
/**
 * The system accounts the migrations open: the fixed ones, one float per VTU provider, and shards
 * #1 to #7 of each hot one (collections_pool, vtu_in_flight, revenue_markup and the floats, decision
 * 0050), each an account of its own to the check.
 */
const SYSTEM_ACCOUNT_COUNT =
  Object.keys(systemAccounts).length + vtuProviderNames.length + 7 * (3 + vtuProviderNames.length);

describe('checkLedger', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  it('is ok on a fresh ledger', async () => {
    assert.deepEqual(await checkLedger(ledger.db), {
      ok: true,
      accounts: SYSTEM_ACCOUNT_COUNT,
      entries: 0,
      imbalances: [],
    });
  });

  it('is ok on a busy ledger, and counts its accounts and entries', async () => {
    const users = [await createUser(ledger.db), await createUser(ledger.db), await createUser(ledger.db)];
    let entries = 0;
    for (const [i, u] of users.entries()) {
      await post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(u), 50_000n), now());
      await post(ledger.db, transfer(uniqueReference('sav'), wallet(u), savings(u), 10_000n), now());
      await post(
        ledger.db,
        {
          reference: uniqueReference('vtu'),
          description: 'airtime',
          entries: [
            { account: wallet(u), amount: -1_100n },
            { account: vtuInFlight, amount: 1_000n },
            { account: revenueMarkup, amount: 100n },
          ],
        },
        now(),
      );
      const next = users[(i + 1) % users.length]!;
      await post(ledger.db, transfer(uniqueReference('trf'), wallet(u), wallet(next), 2_500n), now());
      entries += 2 + 2 + 3 + 2;
    }
    assert.deepEqual(await checkLedger(ledger.db), {
      ok: true,
      accounts: SYSTEM_ACCOUNT_COUNT + userAccountKinds.length * users.length,
      entries,
      imbalances: [],
    });
  });

  it('reports a stored balance that no longer matches its entries', async () => {
    const u = await createUser(ledger.db);
    await post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(u), 3_000n), now());
    const pool = await balanceOf(ledger.db, collectionsPool);

    // Balances are the one thing raw SQL may change (entries and transactions are immutable).
    await sql`update ledger_accounts set balance = balance + 1 where code = ${wallet(u)}`.execute(ledger.db);
    await sql`update ledger_accounts set balance = balance - 5 where code = ${collectionsPool}`.execute(
      ledger.db,
    );
    const tampered = await checkLedger(ledger.db);
    assert.equal(tampered.ok, false);
    assert.deepEqual(sortImbalances(tampered).imbalances, [
      { kind: 'account', account: collectionsPool, balance: String(pool - 5n), entriesSum: String(pool) },
      { kind: 'account', account: wallet(u), balance: '3001', entriesSum: '3000' },
    ]);

    // Putting the balances back makes the ledger whole again.
    await sql`update ledger_accounts set balance = balance - 1 where code = ${wallet(u)}`.execute(ledger.db);
    await sql`update ledger_accounts set balance = balance + 5 where code = ${collectionsPool}`.execute(
      ledger.db,
    );
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('never reports an imbalance while postings commit alongside it', async () => {
    const u = await createUser(ledger.db);
    await post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(u), 100_000n), now());
    const work: Array<Promise<unknown>> = [];
    const checks: Array<Promise<LedgerCheck>> = [];
    for (let i = 0; i < 30; i++) {
      work.push(post(ledger.db, transfer(uniqueReference('vtu'), wallet(u), vtuInFlight, 10n), now()));
      if (i % 3 === 0) checks.push(checkLedger(ledger.db));
    }
    await Promise.all(work);
    for (const check of await Promise.all(checks)) assert.deepEqual(check.imbalances, []);
  });

  it('reports an unbalanced posting, the total, and a negative user account', async () => {
    // A ledger broken in ways the schema and post() forbid, so built in a database of its own with
    // raw SQL and a dropped constraint: immutable rows cannot be cleaned up afterwards.
    const broken = await openLedgerDatabase();
    try {
      const u = await createUser(broken.db);
      const { id: markupId } = await broken.db
        .selectFrom('ledger_accounts')
        .select('id')
        .where('code', '=', revenueMarkup)
        .executeTakeFirstOrThrow();
      const tx = await broken.db
        .insertInto('ledger_transactions')
        .values({
          reference: 'forged_1',
          description: 'forged',
          content_hash: 'x',
          metadata: '{}',
          created_at: now(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await broken.db
        .insertInto('ledger_entries')
        .values({
          transaction_id: tx.id,
          account_id: markupId,
          amount: 7n,
          balance_after: 7n,
          created_at: now(),
        })
        .execute();
      // The account's balance agrees with its entries, so only the posting and the total are off.
      await sql`update ledger_accounts set balance = 7 where id = ${markupId}`.execute(broken.db);
      await sql`alter table ledger_accounts drop constraint ledger_accounts_user_not_negative`.execute(
        broken.db,
      );
      await sql`update ledger_accounts set balance = -1 where code = ${savings(u)}`.execute(broken.db);

      const check = sortImbalances(await checkLedger(broken.db));
      assert.equal(check.ok, false);
      assert.equal(check.entries, 1);
      assert.deepEqual(check.imbalances, [
        { kind: 'account', account: savings(u), balance: '-1', entriesSum: '0' },
        { kind: 'negative_user_account', account: savings(u), balance: '-1' },
        { kind: 'posting', reference: 'forged_1', sum: '7' },
        { kind: 'total', sum: '7' },
      ]);
    } finally {
      await broken.close();
    }
  });
});

describe('npm run ledger:check', () => {
  const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const cli = path.join(repoRoot, 'src/ledger/check-cli.ts');
  const tempDirs: string[] = [];
  after(() => {
    for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the CLI with exactly the given environment (nothing inherited, so no stray DATABASE_URL). */
  async function runCli(
    env: Record<string, string>,
    args: string[] = [],
  ): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  }

  it('exits 0 with ok:true on a fresh PGlite ledger, and 1 once a balance is tampered with', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-ledger-check-'));
    tempDirs.push(dataDir);

    const fresh = await runCli({ DATA_DIR: dataDir });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.deepEqual(JSON.parse(fresh.stdout), {
      ok: true,
      accounts: SYSTEM_ACCOUNT_COUNT,
      entries: 0,
      imbalances: [],
    });

    // The CLI migrated the data directory; post into it and tamper with it, then let go of it.
    const database = await openDatabase({ kind: 'pglite', dataDir });
    let userId: string;
    try {
      userId = await createUser(database.db);
      await post(
        database.db,
        transfer(uniqueReference('top'), collectionsPool, wallet(userId), 1_500n),
        now(),
      );
      assert.deepEqual((await checkLedger(database.db)).imbalances, []);
    } finally {
      await database.close();
    }
    const busy = await runCli({ DATA_DIR: dataDir });
    assert.equal(busy.code, 0, busy.stderr);
    assert.equal(JSON.parse(busy.stdout).entries, 2);

    const again = await openDatabase({ kind: 'pglite', dataDir });
    try {
      await sql`update ledger_accounts set balance = balance + 1 where code = ${wallet(userId)}`.execute(
        again.db,
      );
    } finally {
      await again.close();
    }
    const tampered = await runCli({ DATA_DIR: dataDir });
    assert.equal(tampered.code, 1);
    assert.deepEqual(JSON.parse(tampered.stdout), {
      ok: false,
      accounts: SYSTEM_ACCOUNT_COUNT + userAccountKinds.length,
      entries: 2,
      imbalances: [{ kind: 'account', account: wallet(userId), balance: '1501', entriesSum: '1500' }],
    });
  });

  /** The kinds of the recorded runs, oldest first. */
  async function recordedKinds(target: DatabaseTarget): Promise<string[]> {
    const database = await openDatabase(target);
    try {
      const rows = await database.db.selectFrom('ledger_checks').select('kind').orderBy('id').execute();
      return rows.map((row) => row.kind);
    } finally {
      await database.close();
    }
  }

  it('runs the incremental check by default and the full one with --full, each recorded as such', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-ledger-check-'));
    tempDirs.push(dataDir);
    const quick = await runCli({ DATA_DIR: dataDir });
    assert.equal(quick.code, 0, quick.stderr);
    const database = await openDatabase({ kind: 'pglite', dataDir });
    let userId: string;
    try {
      userId = await createUser(database.db);
      await post(database.db, transfer(uniqueReference('top'), collectionsPool, wallet(userId), 900n), now());
      await sql`update ledger_accounts set balance = balance + 1 where code = ${wallet(userId)}`.execute(
        database.db,
      );
    } finally {
      await database.close();
    }
    const expected = {
      ok: false,
      accounts: SYSTEM_ACCOUNT_COUNT + userAccountKinds.length,
      entries: 2,
      imbalances: [{ kind: 'account', account: wallet(userId), balance: '901', entriesSum: '900' }],
    };
    const full = await runCli({ DATA_DIR: dataDir }, ['--full']);
    assert.equal(full.code, 1, full.stderr);
    assert.deepEqual(JSON.parse(full.stdout), expected);
    const incremental = await runCli({ DATA_DIR: dataDir });
    assert.equal(incremental.code, 1, incremental.stderr);
    assert.deepEqual(JSON.parse(incremental.stdout), expected);
    assert.deepEqual(await recordedKinds({ kind: 'pglite', dataDir }), [
      'incremental',
      'full',
      'incremental',
    ]);
  });

  it('reads the full check from REPLICA_DATABASE_URL and records it on the primary', {
    skip: !onPostgres() && 'DATABASE_URL is not set',
  }, async () => {
    const primary = await createTestDatabase();
    const replica = await createTestDatabase();
    try {
      const url = (t: DatabaseTarget) => (t.kind === 'postgres' ? t.url : '');
      // A stand-in for the replica that differs from the primary: only a read of it finds this.
      const database = await openDatabase(replica.target);
      try {
        await sql`update ledger_accounts set balance = balance - 3 where code = ${vtuInFlight}`.execute(
          database.db,
        );
      } finally {
        await database.close();
      }
      const env = { DATABASE_URL: url(primary.target), REPLICA_DATABASE_URL: url(replica.target) };
      const full = await runCli(env, ['--full']);
      assert.equal(full.code, 1, full.stderr);
      assert.deepEqual(JSON.parse(full.stdout).imbalances, [
        { kind: 'account', account: vtuInFlight, balance: '-3', entriesSum: '0' },
      ]);
      const incremental = await runCli(env);
      assert.equal(incremental.code, 0, incremental.stderr);
      assert.deepEqual(await recordedKinds(primary.target), ['full', 'incremental']);
      assert.deepEqual(await recordedKinds(replica.target), []);
    } finally {
      await primary.drop();
      await replica.drop();
    }
  });

  it('exits 1 with a message when it cannot run at all', async () => {
    const failed = await runCli({ DATABASE_URL: 'mysql://nowhere/billrail' });
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /ledger check failed: invalid DATABASE_URL/);
  });

  it('checks a PostgreSQL ledger given DATABASE_URL', {
    skip: !onPostgres() && 'DATABASE_URL is not set',
  }, async () => {
    const testDatabase = await createTestDatabase();
    try {
      assert.equal(testDatabase.target.kind, 'postgres');
      const url = testDatabase.target.kind === 'postgres' ? testDatabase.target.url : '';
      const fresh = await runCli({ DATABASE_URL: url });
      assert.equal(fresh.code, 0, fresh.stderr);
      assert.equal(JSON.parse(fresh.stdout).ok, true);

      const database = await openDatabase({ kind: 'postgres', url, poolMax: 2 });
      try {
        await sql`update ledger_accounts set balance = balance - 3 where code = ${vtuInFlight}`.execute(
          database.db,
        );
      } finally {
        await database.close();
      }
      const tampered = await runCli({ DATABASE_URL: url });
      assert.equal(tampered.code, 1);
      assert.deepEqual(JSON.parse(tampered.stdout).imbalances, [
        { kind: 'account', account: vtuInFlight, balance: '-3', entriesSum: '0' },
      ]);
    } finally {
      await testDatabase.drop();
    }
  });
});

/** Imbalances in a stable order (by kind, then account or reference) for exact comparison. */
function sortImbalances(check: LedgerCheck): LedgerCheck {
  const key = (i: LedgerCheck['imbalances'][number]) =>
    `${i.kind === 'negative_user_account' ? 'account' : i.kind}|${'account' in i ? i.account : 'reference' in i ? i.reference : ''}|${i.kind}`;
  return { ...check, imbalances: [...check.imbalances].sort((a, b) => (key(a) < key(b) ? -1 : 1)) };
}

describe('checkLedger on a posting without entries', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  it('reports a transaction row that has no entries behind it', async () => {
    // post() cannot produce one (it writes the row and its entries in one transaction, under a
    // savepoint); raw SQL can, and the check must notice it.
    await sql`insert into ledger_transactions (reference, description, content_hash, created_at)
      values ('orphan_1', 'orphan', 'x', now())`.execute(ledger.db);
    const result = await checkLedger(ledger.db);
    assert.equal(result.ok, false);
    assert.deepEqual(result.imbalances, [{ kind: 'empty_posting', reference: 'orphan_1' }]);
  });
});
