import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import type { DB } from '../src/db/schema.ts';
import {
  openLedgerShards,
  openUserAccounts,
  providerFloatAccount,
  systemAccounts,
  systemBalances,
  userAccount,
} from '../src/ledger/accounts.ts';
import { checkLedger } from '../src/ledger/check.ts';
import { type PostingRequest, post, postBatch } from '../src/ledger/postings.ts';
import { percentile } from './common.ts';
import { waitShares } from './report.ts';

// `node bench/ledger-postings.ts`: the hot system accounts kept in one row against K rows
// (LEDGER_SHARDS, decision 0050), with the ledger's own code. On a scratch PostgreSQL database
// migrated like the service's, N clients each run purchases as the service's group commit posts
// them: an acceptance transaction (postBatch of `batch` debits, each buyer's wallet into
// vtu_in_flight), then a settlement transaction (postBatch of as many settlements, vtu_in_flight to
// provider_float:data and revenue_markup), for S seconds at each K given, one after the other on
// the same database. bench/contention.ts measures the same rows with hand-written statements; this
// runs postBatch itself (the lock read, the one write statement, the shard drawn per transaction).
//
// Reports postings/s (acceptances and settlements: two per purchase) and purchases/s per K, with
// what the clients' backends were doing, sampled every 20 ms from pg_stat_activity: waiting for a
// row lock, flushing WAL, or running. Ends with the ledger check of the whole run.
//
// Options: --clients 16  --batch 20 (postings per transaction)  --shards 1,8  --seconds 8.
// BENCH_POSTGRES_URL: the server (default local). Run as every script is, with the pinned Node:
// `npm exec -- node bench/ledger-postings.ts --shards 1,8`. `npm run bench` runs it as its
// ledgerPostings scenario through runLedgerPostings.

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SAMPLE_EVERY_MS = 20;
const PRICE_KOBO = 10_000n;
const WHOLESALE_KOBO = 9_700n;
const FUNDS_KOBO = 10n ** 12n;

export type LedgerPostingsOptions = {
  /** Concurrent clients, each with its own buyers. */
  clients: number;
  /** Postings per transaction. */
  batch: number;
  /** The K (LEDGER_SHARDS) values, run one after the other on the same database. */
  shards: number[];
  seconds: number;
  /** The PostgreSQL server, as an admin URL (a scratch database is made on it and dropped). */
  adminUrl?: string;
};

export type WaitSamples = { samples: number; busy: number; rowLock: number; wal: number; running: number };

/** One K's figures: postings (two per purchase) per second, and what the backends did. */
export type LedgerPostingsRound = {
  shards: number;
  seconds: number;
  postings: number;
  postingsPerSecond: number;
  purchasesPerSecond: number;
  /** Transactions (postBatch calls: one acceptance and one settlement per batch) and their latency. */
  transactions: number;
  transactionP50Ms: number;
  transactionP99Ms: number;
  waits: WaitSamples;
};

export type LedgerPostingsRun = {
  clients: number;
  batch: number;
  rounds: LedgerPostingsRound[];
  /** The ledger check of the whole run, and vtu_in_flight after it (zero when every purchase settled). */
  check: { ok: boolean; entries: number; imbalances: number; vtuInFlightKobo: string };
};

const now = () => new Date();

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A buyer as the ledger needs one: a users row and its accounts, funded from the collections pool. */
async function fundedBuyer(db: Kysely<DB>): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('users')
    .values({
      id,
      phone: `+234${randomBytes(5).toString('hex')}`,
      email: null,
      first_name: null,
      last_name: null,
      referral_code: randomBytes(6).toString('hex').toUpperCase(),
      referred_by_code: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  await openUserAccounts(db, id, now());
  await post(
    db,
    {
      reference: `bench_top_${randomBytes(8).toString('hex')}`,
      description: 'bench funds',
      entries: [
        { account: systemAccounts.collectionsPool, amount: -FUNDS_KOBO },
        { account: userAccount('wallet', id), amount: FUNDS_KOBO },
      ],
    },
    now(),
  );
  return id;
}

const acceptance = (userId: string, reference: string): PostingRequest => ({
  reference: `bench_debit_${reference}`,
  description: 'bench airtime',
  entries: [
    { account: userAccount('wallet', userId), amount: -PRICE_KOBO },
    { account: systemAccounts.vtuInFlight, amount: PRICE_KOBO },
  ],
});

const settlement = (reference: string): PostingRequest => ({
  reference: `bench_settle_${reference}`,
  description: 'bench airtime delivered',
  entries: [
    { account: systemAccounts.vtuInFlight, amount: -PRICE_KOBO },
    { account: providerFloatAccount('data'), amount: WHOLESALE_KOBO },
    { account: systemAccounts.revenueMarkup, amount: PRICE_KOBO - WHOLESALE_KOBO },
  ],
});

/** Samples what the database's backends do (its own sampler's aside), until stopped. */
function sampleWaits(url: string, database: string): { stop(): Promise<WaitSamples> } {
  const counts: WaitSamples = { samples: 0, busy: 0, rowLock: 0, wal: 0, running: 0 };
  let stopped = false;
  const done = withClient(url, async (client) => {
    while (!stopped) {
      const { rows } = await client.query<{ type: string | null; event: string | null; n: string }>(
        `select wait_event_type as type, wait_event as event, count(*) as n from pg_stat_activity
          where datname = $1 and state = 'active' and pid <> pg_backend_pid() group by 1, 2`,
        [database],
      );
      counts.samples += 1;
      for (const row of rows) {
        const n = Number(row.n);
        counts.busy += n;
        if (row.type === 'Lock') counts.rowLock += n;
        else if (row.event?.startsWith('WAL') === true) counts.wal += n;
        else if (row.type === null) counts.running += n;
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  });
  return {
    async stop() {
      stopped = true;
      await done;
      return counts;
    },
  };
}

/** Purchases at K shards for `seconds`: every client's acceptance then settlement, in a loop. */
async function run(
  db: Kysely<DB>,
  url: string,
  database: string,
  buyers: string[][],
  shards: number,
  seconds: number,
): Promise<LedgerPostingsRound> {
  let postings = 0;
  const latencies: number[] = [];
  const timed = async <T>(fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const value = await fn();
    latencies.push(performance.now() - started);
    return value;
  };
  const deadline = performance.now() + seconds * 1000;
  const sampler = sampleWaits(url, database);
  const startedAt = performance.now();
  await Promise.all(
    buyers.map(async (own) => {
      while (performance.now() < deadline) {
        const references = own.map(() => randomBytes(12).toString('hex'));
        const accepted = await timed(() =>
          db.transaction().execute((trx) =>
            postBatch(
              trx,
              own.map((userId, i) => acceptance(userId, references[i]!)),
              now(),
              { shards, referencesUnposted: true },
            ),
          ),
        );
        const settled = await timed(() =>
          db
            .transaction()
            .execute((trx) =>
              postBatch(trx, references.map(settlement), now(), { shards, referencesUnposted: true }),
            ),
        );
        for (const result of [...accepted, ...settled]) if (result.status === 'rejected') throw result.reason;
        postings += accepted.length + settled.length;
      }
    }),
  );
  const elapsed = (performance.now() - startedAt) / 1000;
  latencies.sort((a, b) => a - b);
  const postingsPerSecond = Math.round(postings / elapsed);
  return {
    shards,
    seconds: Math.round(elapsed * 100) / 100,
    postings,
    postingsPerSecond,
    purchasesPerSecond: Math.round(postingsPerSecond / 2),
    transactions: latencies.length,
    transactionP50Ms: percentile(latencies, 50),
    transactionP99Ms: percentile(latencies, 99),
    waits: await sampler.stop(),
  };
}

/**
 * The microbench on a scratch database of its own (made, migrated, dropped): one round per K, each
 * printed as it ends (`write`), then the ledger check of the whole run.
 */
export async function runLedgerPostings(
  options: LedgerPostingsOptions,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<LedgerPostingsRun> {
  const { clients, batch, shards: shardCounts, seconds } = options;
  const adminUrl = options.adminUrl ?? ADMIN_URL;
  const name = `ledger_postings_${randomBytes(5).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ kind: 'postgres', url: url.toString(), poolMax: clients + 2 });
  try {
    const { db } = database;
    await migrateToLatest(db as Kysely<unknown>);
    await openLedgerShards(db, Math.max(...shardCounts), now());
    const buyers: string[][] = [];
    for (let c = 0; c < clients; c += 1)
      buyers.push(await Promise.all(Array.from({ length: batch }, () => fundedBuyer(db))));
    write(
      `${clients} clients, ${batch} postings per transaction, ${seconds} s each\n` +
        `${'shards'.padStart(6)} ${'postings/s'.padStart(10)} ${'purchases/s'.padStart(11)}  backends busy: row lock / WAL / running (mean active)`,
    );
    const rounds: LedgerPostingsRound[] = [];
    for (const shards of shardCounts) {
      const round = await run(db, url.toString(), name, buyers, shards, seconds);
      rounds.push(round);
      write(
        `${String(shards).padStart(6)} ${String(round.postingsPerSecond).padStart(10)} ${String(round.purchasesPerSecond).padStart(11)}  ${waitShares(round.waits)}`,
      );
    }
    const balances = await systemBalances(db, [systemAccounts.vtuInFlight]);
    const check = await checkLedger(db);
    const inFlight = balances.get(systemAccounts.vtuInFlight) ?? 0n;
    write(
      `ledger check: ${check.ok ? 'balanced' : `${check.imbalances.length} imbalances`} over ${check.entries} entries; vtu_in_flight ${inFlight}`,
    );
    return {
      clients,
      batch,
      rounds,
      check: {
        ok: check.ok && inFlight === 0n,
        entries: check.entries,
        imbalances: check.imbalances.length,
        vtuInFlightKobo: String(inFlight),
      },
    };
  } finally {
    await database.close();
    await withClient(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

if (import.meta.main) {
  const { values: options } = parseArgs({
    options: {
      clients: { type: 'string', default: '16' },
      batch: { type: 'string', default: '20' },
      shards: { type: 'string', default: '1,8' },
      seconds: { type: 'string', default: '8' },
    },
  });
  const result = await runLedgerPostings({
    clients: Number.parseInt(options.clients, 10),
    batch: Number.parseInt(options.batch, 10),
    shards: options.shards.split(',').map((n) => Number.parseInt(n, 10)),
    seconds: Number(options.seconds),
  });
  if (!result.check.ok) process.exitCode = 1;
}
