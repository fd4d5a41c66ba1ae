import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { type Database, openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { checkLedger, type LedgerCheck } from '../src/ledger/check.ts';
import { checkLedgerIncrementally } from '../src/ledger/incremental-check.ts';

// `node bench/ledger-check.ts`: the incremental ledger check against the full one (issue 43 item 4,
// decision 0053). On a scratch PostgreSQL database it bulk-loads a ledger of --entries entries
// (balanced two-entry postings from the collections pool to --users wallets, every balance and
// balance_after as post() would leave them), takes a checkpoint, adds --new entries more, then times
// one incremental run (the entries past the checkpoint) and one full check (every entry). Both must
// find the ledger whole, or the bench fails.
//
// Options: --entries 10000000  --new 100000  --users 250000  --keep (leave the database, to EXPLAIN
// its statements). BENCH_POSTGRES_URL: the server (default
// local). Run it niced: the load writes a few GB.

const DEFAULT_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Postings per INSERT: 500,000 postings are a million entries. */
const POSTINGS_PER_STATEMENT = 500_000;
/** Every bench posting moves this much, so an entry's balance_after has a closed form. */
const AMOUNT_KOBO = 100;

export type LedgerCheckOptions = {
  entries: number;
  new: number;
  users: number;
  /** Leave the database, to EXPLAIN its statements. */
  keep?: boolean;
  /** The PostgreSQL server, as an admin URL (default BENCH_POSTGRES_URL, else local). */
  adminUrl?: string;
};

/** What one run measured: the entries as loaded and added, and each step's seconds. */
export type LedgerCheckRun = {
  entries: number;
  added: number;
  users: number;
  loadSeconds: number;
  firstRunSeconds: number;
  incrementalSeconds: number;
  fullSeconds: number;
};

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Seconds a step took, printed as it ends. */
async function timed<T>(label: string, step: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const started = performance.now();
  const result = await step();
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${label.padEnd(44)} ${seconds.toFixed(2).padStart(8)} s\n`);
  return { result, seconds };
}

/** One user and one wallet per n: the wallets postings are spread over, in order. */
async function openWallets(client: pg.Client, users: number): Promise<void> {
  await client.query(
    `insert into users (id, phone, email, first_name, last_name, referral_code, referred_by_code, created_at, updated_at)
     select gen_random_uuid(), '+23480' || lpad(n::text, 8, '0'), null, null, null,
            'B' || lpad(n::text, 9, '0'), null, now(), now()
     from generate_series(1, $1::int) n`,
    [users],
  );
  await client.query(
    `insert into ledger_accounts (code, kind, user_id, balance, created_at)
     select 'wallet:' || id, 'user', id, 0, now() from users order by phone`,
  );
  await client.query('create temporary table bench_wallets (n int primary key, account_id bigint not null)');
  await client.query(
    `insert into bench_wallets
     select row_number() over (order by a.id) - 1, a.id from ledger_accounts a where a.kind = 'user'`,
  );
}

/**
 * Postings first+1 … first+count (numbered from 1 over the whole bench): posting g moves AMOUNT from
 * the collections pool to wallet g mod users. Ids are given, so an entry's balance_after is known
 * without a running sum: the pool is at -AMOUNT·g after posting g, the wallet at AMOUNT·(its count).
 */
async function loadPostings(
  client: pg.Client,
  pool: bigint,
  first: number,
  count: number,
  users: number,
): Promise<void> {
  for (let from = first + 1; from <= first + count; from += POSTINGS_PER_STATEMENT) {
    const to = Math.min(first + count, from + POSTINGS_PER_STATEMENT - 1);
    await client.query(
      `insert into ledger_transactions (id, reference, description, content_hash, metadata, created_at)
       overriding system value
       select g, 'bench_' || g, 'bench top-up', 'bench', '{}', now() from generate_series($1::int8, $2::int8) g`,
      [from, to],
    );
    await client.query(
      `insert into ledger_entries (id, transaction_id, account_id, amount, balance_after, created_at)
       overriding system value
       select 2 * g - 1, g, $3::int8, -$4::int8, -$4::int8 * g, now() from generate_series($1::int8, $2::int8) g
       union all
       select 2 * g, g, w.account_id, $4::int8, $4::int8 * ((g - 1) / $5::int8 + 1), now()
       from generate_series($1::int8, $2::int8) g join bench_wallets w on w.n = g % $5::int8`,
      [from, to, pool, AMOUNT_KOBO, users],
    );
  }
  // The sequences go on after the ids given, as post() would have left them.
  await client.query(
    `select setval(pg_get_serial_sequence('ledger_transactions', 'id'), $1::int8),
            setval(pg_get_serial_sequence('ledger_entries', 'id'), 2 * $1::int8)`,
    [first + count],
  );
  // Balances as after posting first+count: the pool gave AMOUNT for each, each wallet received its share.
  await client.query(`update ledger_accounts set balance = -$1::int8 * $2::int8 where id = $3::int8`, [
    AMOUNT_KOBO,
    first + count,
    pool,
  ]);
  // Wallet n (0 … users-1) received the postings g ≡ n (mod users), g ≤ total: wallet 0 those of
  // users, 2·users, …, as if it were wallet `users`. Only the wallets whose balance moved are
  // written, as postings would: rewriting every row would leave the accounts' table twice its size
  // in dead rows, which the next check would pay for and a live ledger does not have.
  await client.query(
    `with moved as (
       select w.account_id,
              $1::int8 * (($2::int8 - (case when w.n = 0 then $3::int8 else w.n end) + $3::int8) / $3::int8) as balance
       from bench_wallets w
     )
     update ledger_accounts a set balance = m.balance
     from moved m where m.account_id = a.id and a.balance <> m.balance`,
    [AMOUNT_KOBO, first + count, users],
  );
}

function mustBeWhole(label: string, check: LedgerCheck, entries: number): void {
  if (!check.ok)
    throw new Error(`${label} found imbalances: ${JSON.stringify(check.imbalances.slice(0, 5))}`);
  if (check.entries !== entries) throw new Error(`${label} counted ${check.entries} entries, not ${entries}`);
}

/** The bench on a scratch database of its own; throws when a check finds the ledger not whole. */
export async function runLedgerCheck(options: LedgerCheckOptions): Promise<LedgerCheckRun> {
  const { entries: entriesLoaded, new: entriesAdded, users } = options;
  for (const [name, n] of Object.entries({ entries: entriesLoaded, new: entriesAdded, users }))
    if (!Number.isInteger(n) || n < 2) throw new Error(`--${name} must be a whole number of at least 2`);
  const ADMIN_URL = options.adminUrl ?? DEFAULT_ADMIN_URL;
  const name = `ledger_check_${randomBytes(5).toString('hex')}`;
  await withClient(ADMIN_URL, (client) => client.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  let database: Database | null = null;
  let load = { seconds: 0 };
  try {
    database = await openDatabase({ kind: 'postgres', url: url.toString(), poolMax: 4, timeoutMs: 0 });
    const db = database.db;
    await migrateToLatest(db as Kysely<unknown>);
    const postingsLoaded = Math.floor(entriesLoaded / 2);
    const postingsAdded = Math.floor(entriesAdded / 2);
    process.stdout.write(
      `ledger check bench: ${2 * postingsLoaded} entries loaded, ${2 * postingsAdded} added, ${users} wallets\n`,
    );
    await withClient(url.toString(), async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `select id::text from ledger_accounts where code = 'collections_pool'`,
      );
      const pool = BigInt(rows[0]!.id);
      await timed('load wallets', () => openWallets(client, users));
      load = await timed(`load ${2 * postingsLoaded} entries`, () =>
        loadPostings(client, pool, 0, postingsLoaded, users),
      );
      await timed('vacuum analyze', () => client.query('vacuum analyze'));
    });
    const first = await timed('first incremental run (the checkpoint)', () =>
      checkLedgerIncrementally(db, new Date()),
    );
    mustBeWhole('the first run', first.result, 2 * postingsLoaded);

    await withClient(url.toString(), async (client) => {
      await client.query(
        `create temporary table bench_wallets as select row_number() over (order by id) - 1 as n, id as account_id
         from ledger_accounts where kind = 'user'`,
      );
      const { rows } = await client.query<{ id: string }>(
        `select id::text from ledger_accounts where code = 'collections_pool'`,
      );
      await timed(`add ${2 * postingsAdded} entries`, () =>
        loadPostings(client, BigInt(rows[0]!.id), postingsLoaded, postingsAdded, users),
      );
    });
    const total = 2 * (postingsLoaded + postingsAdded);
    const incremental = await timed(`incremental run (${2 * postingsAdded} new entries)`, () =>
      checkLedgerIncrementally(db, new Date()),
    );
    mustBeWhole('the incremental run', incremental.result, total);
    const full = await timed(`full check (${total} entries)`, () => checkLedger(db));
    mustBeWhole('the full check', full.result, total);
    process.stdout.write(
      `\nincremental ${incremental.seconds.toFixed(2)} s, full ${full.seconds.toFixed(2)} s (${(full.seconds / incremental.seconds).toFixed(0)}x)\n`,
    );
    return {
      entries: 2 * postingsLoaded,
      added: 2 * postingsAdded,
      users,
      loadSeconds: load.seconds,
      firstRunSeconds: first.seconds,
      incrementalSeconds: incremental.seconds,
      fullSeconds: full.seconds,
    };
  } finally {
    await database?.close();
    if (options.keep === true) process.stdout.write(`kept: ${url.toString()}\n`);
    else
      await withClient(ADMIN_URL, (client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

if (import.meta.main) {
  const { values: options } = parseArgs({
    options: {
      entries: { type: 'string', default: '10000000' },
      new: { type: 'string', default: '100000' },
      users: { type: 'string', default: '250000' },
      keep: { type: 'boolean', default: false },
    },
  });
  await runLedgerCheck({
    entries: Number.parseInt(options.entries, 10),
    new: Number.parseInt(options.new, 10),
    users: Number.parseInt(options.users, 10),
    keep: options.keep,
  });
}
