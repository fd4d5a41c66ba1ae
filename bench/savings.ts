import { randomInt, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import {
  type Kysely,
  type KyselyPlugin,
  RawNode,
  type RootOperationNode,
  sql,
  type Transaction,
} from 'kysely';
import type { Context } from '../src/context.ts';
import type { DB } from '../src/db/schema.ts';
import { newId } from '../src/ids.ts';
import { systemAccounts, userAccount } from '../src/ledger/accounts.ts';
import { checkLedger } from '../src/ledger/check.ts';
import { postBatch } from '../src/ledger/postings.ts';
import { matureDueLocks, maturityBatchMax } from '../src/savings/maturity.ts';
import {
  balanceNaira,
  benchContext,
  type Check,
  CONNECTIONS,
  eventually,
  fromAutocannon,
  fundWallet,
  getOperation,
  insertUsers,
  loadSeconds,
  mapConcurrent,
  measured,
  nextPhone,
  percentile,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  signIn,
} from './common.ts';

// Savings locks (issue 17), two scenarios:
//
//   createSavingsLock  POST createSavingsLock through the running service, autocannon, 50 connections,
//                      LOCK_USERS signed-in users with funded wallets, the user changing on every
//                      request (round-robin), so that one wallet's lock does not serialise the run;
//                      each request locks ₦LOCK_NAIRA for LOCK_DAYS days with its own Idempotency-Key.
//                      Afterwards the wallets must hold what was funded less what was locked, and
//                      adminLedgerCheck must be ok.
//   savingsMaturity    in this process, on the service's database once the service has stopped (so
//                      that its own maturity job cannot take part): N active locks of a few thousand
//                      users, written in bulk with their money moved from the collections pool into
//                      each user's savings account (postBatch), all maturing at the same instant;
//                      the context's sandbox clock is moved past that instant and matureDueLocks is
//                      timed until it returns. Every lock must then be matured and credited once,
//                      each wallet up by exactly its locks' sum, the savings accounts at zero, and
//                      checkLedger ok. A round with two runners (two matureDueLocks at once, as two
//                      worker processes run the job) runs on PostgreSQL too.
//
// BENCH_MATURITY_LOCKS (default 100,000 on PostgreSQL, 10,000 on PGlite), BENCH_MATURITY_USERS
// (2,000), BENCH_MATURITY_BATCH_MAX (a comma-separated list of batchMax values, a round each; default
// the job's own, 1,000) and BENCH_MATURITY_RUNNERS (a list; default 1,2 on PostgreSQL, 1 on PGlite).
// Each round profiles its transactions (one per batch) and the statements in them.
// BENCH_SAVINGS_USERS (1,000) sets createSavingsLock's users.

const LOCK_USERS = Number(process.env.BENCH_SAVINGS_USERS ?? 1_000);
const FUND_NAIRA = 100_000;
const LOCK_NAIRA = 100;
/** Each maturity round moves the clock MATURITY_DAYS on: these locks stay out of 52 rounds. */
const LOCK_DAYS = 365;
const LOCK_DURATION_SECONDS = loadSeconds(10);
/** Funding events of these users carry event ids from here (the buyers' are from 1,000,000). */
const FUNDING_SEQUENCE_FROM = 2_000_000;

const MATURITY_LOCKS = { postgres: 100_000, pglite: 10_000 } as const;
/** Issue 17: every lock credited within this, for MATURITY_LOCKS due at once. */
export const MATURITY_TARGET_SECONDS = { postgres: 60, pglite: 30 } as const;
const MATURITY_USERS = Number(process.env.BENCH_MATURITY_USERS ?? 2_000);
const MATURITY_DAYS = 7;
const SEED_LOCKS_PER_STATEMENT = 10_000;
const SEED_POSTINGS_PER_TRANSACTION = 500;

const numbers = (value: string | undefined): number[] | undefined =>
  value
    ?.split(',')
    .map((n) => Number(n.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);

// ---------------------------------------------------------------------------------------------
// createSavingsLock over HTTP

export async function createSavingsLockScenario(
  server: Server,
  database: string,
  adminToken: string,
): Promise<{ result: ScenarioResult; checks: Check[] }> {
  const tokens = await mapConcurrent(
    Array.from({ length: LOCK_USERS }, (_, i) => i),
    SETUP_CONCURRENCY,
    async (i) => {
      const token = await signIn(server.baseUrl, nextPhone());
      await fundWallet(server.baseUrl, token, FUND_NAIRA, FUNDING_SEQUENCE_FROM + i);
      return token;
    },
  );
  const wallets = () => mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(server.baseUrl, t));
  await eventually('the savers’ wallets funded', async () => (await wallets()).every((b) => b >= FUND_NAIRA));

  let nextToken = 0;
  const { value, usage } = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: LOCK_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/createSavingsLock',
          // Another user on every request, round-robin over all of them.
          setupRequest: (request) => ({
            ...request,
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${tokens[nextToken++ % tokens.length]}`,
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({ data: { amount: LOCK_NAIRA, days: LOCK_DAYS } }),
          }),
        },
      ],
    }),
  );
  const result = fromAutocannon(
    database,
    'createSavingsLock',
    `POST, ₦${LOCK_NAIRA} for ${LOCK_DAYS} days, ${LOCK_USERS} users round-robin, ${CONNECTIONS} conns, ${LOCK_DURATION_SECONDS}s`,
    value,
    usage,
  );

  const checks: Check[] = [];
  const accepted = value['2xx'];
  const recordedLocks = async () =>
    (
      await mapConcurrent(
        tokens,
        SETUP_CONCURRENCY,
        async (t) =>
          ((await getOperation(server.baseUrl, 'listSavingsLocks', t)).data as { total: number }).total,
      )
    ).reduce((a, b) => a + b, 0);
  // Requests in flight when the load generator stopped still finish on the service (within their
  // timeout): the figures are read once the locks recorded stop changing around the wallets' read.
  let recorded = 0;
  let held = 0;
  await eventually(
    'the locks in flight finished',
    async () => {
      const before = await recordedLocks();
      held = (await wallets()).reduce((a, b) => a + b, 0);
      recorded = await recordedLocks();
      return before === recorded;
    },
    () => '',
    (REQUEST_TIMEOUT_SECONDS + 5) * 1000,
  ).catch(() => false);
  // Requests in flight when the load generator stopped may be recorded without an answer it counted.
  checks.push({
    name: 'every accepted lock recorded',
    ok: recorded >= accepted && recorded <= accepted + CONNECTIONS,
    detail: `${accepted} accepted (2xx), ${recorded} recorded, ${value.non2xx} non-2xx`,
  });
  const expected = LOCK_USERS * FUND_NAIRA - recorded * LOCK_NAIRA;
  checks.push({
    name: 'wallets hold what was funded less what was locked',
    ok: held === expected,
    detail: `₦${held}, expected ₦${expected}`,
  });
  const ledger = (await getOperation(server.baseUrl, 'adminLedgerCheck', adminToken)).data as {
    ok: boolean;
    entries: number;
    imbalances: unknown[];
  };
  checks.push({
    name: 'adminLedgerCheck after savings locks',
    ok: ledger.ok,
    detail: `ok ${ledger.ok}, ${ledger.entries} entries, ${ledger.imbalances.length} imbalances`,
  });
  return { result, checks };
}

// ---------------------------------------------------------------------------------------------
// Maturity of many locks due at once, in this process

export type MaturityRound = {
  locks: number;
  users: number;
  batchMax: number;
  runners: number;
  seedSeconds: number;
  seconds: number;
  locksPerSecond: number;
  /** What each runner's matureDueLocks returned. */
  maturedPerRunner: number[];
  /** One transaction per batch: its duration, begin to commit. */
  batches: { count: number; p50Ms: number; p99Ms: number; maxMs: number; totalMs: number };
  /** Each batch's transaction in the order they finished, in ms: does a batch slow down as more have matured? */
  batchMs: number[];
  /** Time spent in each statement (named by its first words), summed over the round's batches. */
  statements: { statement: string; count: number; totalMs: number; averageMs: number }[];
};

type Timings = {
  batches: number[];
  statements: Map<string, { count: number; ms: number }>;
};

function labelOf(node: RootOperationNode): string {
  if (RawNode.is(node)) {
    const text = node.sqlFragments.join('$').replace(/\s+/g, ' ');
    // statement() heads its text with `/* prepared */ /* <name> */`.
    const named = /\/\* ((?!prepared )[\w.-]+) \*\//.exec(text)?.[1];
    return named ?? text.trim().slice(0, 80);
  }
  return node.kind;
}

/**
 * The database handle matureDueLocks gets, timing each transaction it opens (one per batch) and
 * each statement run through Kysely in it; the events' job (pg-boss) is timed by the jobs wrapper.
 */
function timedDatabase(db: Kysely<DB>, timings: Timings): Kysely<DB> {
  const running = new Map<string, { label: string; startedAt: number }>();
  const record = (label: string, ms: number) => {
    const entry = timings.statements.get(label) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    timings.statements.set(label, entry);
  };
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      running.set(queryId.queryId, { label: labelOf(node), startedAt: performance.now() });
      return node;
    },
    async transformResult({ result, queryId }) {
      const started = running.get(queryId.queryId);
      if (started !== undefined) {
        running.delete(queryId.queryId);
        record(started.label, performance.now() - started.startedAt);
      }
      return result;
    },
  };
  const plugged = db.withPlugin(plugin);
  return new Proxy(plugged, {
    get(target, property) {
      if (property === 'transaction') {
        return () => {
          const builder = target.transaction();
          return {
            async execute<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
              const startedAt = performance.now();
              try {
                return await builder.execute(fn);
              } finally {
                timings.batches.push(performance.now() - startedAt);
              }
            },
          };
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

type Seeded = { userIds: string[]; expectedKobo: Map<string, bigint>; locks: number };

/**
 * `locks` active locks of `users` new users (each lock's user drawn at random, as locks made over
 * time by many people are), all maturing at `maturesAt`, with each user's total moved from the
 * collections pool into its savings account: the ledger stays balanced and the savings accounts
 * hold exactly the active locks, as createLock leaves them.
 */
async function seedDueLocks(ctx: Context, users: number, locks: number): Promise<Seeded> {
  const { db } = ctx;
  const now = ctx.clock.now();
  const maturesAt = new Date(now.getTime() + MATURITY_DAYS * 86_400_000);
  const userIds = (await insertUsers(db, users, now)).map((u) => u.id);

  const expectedKobo = new Map(userIds.map((id) => [id, 0n]));
  for (let from = 0; from < locks; from += SEED_LOCKS_PER_STATEMENT) {
    const count = Math.min(SEED_LOCKS_PER_STATEMENT, locks - from);
    const ids: string[] = [];
    const owners: string[] = [];
    const amounts: bigint[] = [];
    for (let i = 0; i < count; i++) {
      const owner = userIds[randomInt(users)]!;
      // ₦100 to ₦199.
      const amount = BigInt((100 + ((from + i) % 100)) * 100);
      ids.push(newId());
      owners.push(owner);
      amounts.push(amount);
      expectedKobo.set(owner, expectedKobo.get(owner)! + amount);
    }
    await sql`
      insert into savings_locks (id, user_id, amount, days, status, penalty, created_at, matures_at)
      select t.id, t.user_id, t.amount, ${MATURITY_DAYS}, 'active', 0, ${now}, ${maturesAt}
      from unnest(${ids}::uuid[], ${owners}::uuid[], ${amounts}::bigint[]) as t(id, user_id, amount)`.execute(
      db,
    );
  }

  const holders = [...expectedKobo].filter(([, kobo]) => kobo > 0n);
  for (let from = 0; from < holders.length; from += SEED_POSTINGS_PER_TRANSACTION) {
    const chunk = holders.slice(from, from + SEED_POSTINGS_PER_TRANSACTION);
    await db.transaction().execute(async (trx) => {
      const results = await postBatch(
        trx,
        chunk.map(([userId, kobo]) => ({
          reference: `bench-savings-seed:${userId}`,
          description: 'Bench: savings locks seeded in bulk',
          entries: [
            { account: systemAccounts.collectionsPool, amount: -kobo },
            { account: userAccount('savings', userId), amount: kobo },
          ],
        })),
        now,
        { referencesUnposted: true },
      );
      const refused = results.find((r) => r.status === 'rejected');
      if (refused !== undefined) throw refused.reason;
    });
  }
  return { userIds, expectedKobo, locks };
}

async function verifyRound(
  ctx: Context,
  seeded: Seeded,
  round: MaturityRound,
  label: string,
): Promise<Check[]> {
  const { db } = ctx;
  const checks: Check[] = [];
  const statuses = await sql<{ status: string; n: string | number | bigint }>`
    select status, count(*) as n from savings_locks where user_id = any(${seeded.userIds}::uuid[])
    group by status`.execute(db);
  const byStatus = Object.fromEntries(statuses.rows.map((r) => [r.status, Number(r.n)]));
  const matured = round.maturedPerRunner.reduce((a, b) => a + b, 0);
  checks.push({
    name: `${label}: every lock matured`,
    ok: byStatus.matured === seeded.locks && Object.keys(byStatus).length === 1 && matured === seeded.locks,
    detail: `${JSON.stringify(byStatus)} of ${seeded.locks} seeded; runners returned ${round.maturedPerRunner.join(' + ')} = ${matured}`,
  });
  const credited = await sql<{ postings: string | number | bigint; locks: string | number | bigint }>`
    select count(*) as postings, count(distinct l.id) as locks
    from savings_locks l join ledger_transactions t on t.reference = 'savings-mature:' || l.id::text
    where l.user_id = any(${seeded.userIds}::uuid[])`.execute(db);
  const postings = Number(credited.rows[0]?.postings);
  const creditedLocks = Number(credited.rows[0]?.locks);
  checks.push({
    name: `${label}: every lock credited once`,
    ok: postings === seeded.locks && creditedLocks === seeded.locks,
    detail: `${postings} maturity postings for ${creditedLocks} distinct locks of ${seeded.locks}`,
  });
  const balances = await sql<{ code: string; balance: bigint }>`
    select code, balance from ledger_accounts
    where user_id = any(${seeded.userIds}::uuid[]) and (code like 'wallet:%' or code like 'savings:%')`.execute(
    db,
  );
  const balance = new Map(balances.rows.map((r) => [r.code, r.balance]));
  const wrongWallets = seeded.userIds.filter(
    (id) => balance.get(userAccount('wallet', id)) !== seeded.expectedKobo.get(id),
  );
  const nonZeroSavings = seeded.userIds.filter((id) => balance.get(userAccount('savings', id)) !== 0n);
  const total = [...seeded.expectedKobo.values()].reduce((a, b) => a + b, 0n);
  checks.push({
    name: `${label}: each wallet up by its locks' sum, savings at zero`,
    ok: wrongWallets.length === 0 && nonZeroSavings.length === 0,
    detail: `${seeded.userIds.length} users, ₦${total / 100n} in all; ${wrongWallets.length} wallets off, ${nonZeroSavings.length} savings accounts not zero`,
  });
  const ledger = await checkLedger(db);
  checks.push({
    name: `${label}: checkLedger`,
    ok: ledger.ok,
    detail: `ok ${ledger.ok}, ${ledger.accounts} accounts, ${ledger.entries} entries, ${ledger.imbalances.length} imbalances`,
  });
  return checks;
}

async function maturityRound(
  ctx: Context,
  locks: number,
  batchMax: number,
  runners: number,
): Promise<{ round: MaturityRound; seeded: Seeded }> {
  const seedStartedAt = performance.now();
  const seeded = await seedDueLocks(ctx, MATURITY_USERS, locks);
  const seedSeconds = (performance.now() - seedStartedAt) / 1000;
  // Past the instant every seeded lock matures at.
  ctx.sandboxClock!.advance(MATURITY_DAYS * 86_400 + 1);

  const timings: Timings = { batches: [], statements: new Map() };
  const db = timedDatabase(ctx.db, timings);
  const jobs = {
    ...ctx.jobs,
    send: async (...args: Parameters<Context['jobs']['send']>) => {
      const startedAt = performance.now();
      try {
        return await ctx.jobs.send(...args);
      } finally {
        const entry = timings.statements.get('jobs.send (the batch’s events)') ?? { count: 0, ms: 0 };
        entry.count += 1;
        entry.ms += performance.now() - startedAt;
        timings.statements.set('jobs.send (the batch’s events)', entry);
      }
    },
  };
  const startedAt = performance.now();
  const results = await Promise.all(
    Array.from({ length: runners }, () => matureDueLocks({ db, clock: ctx.clock, jobs }, { batchMax })),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  const batches = timings.batches.toSorted((a, b) => a - b);
  const round: MaturityRound = {
    locks,
    users: MATURITY_USERS,
    batchMax,
    runners,
    seedSeconds: Math.round(seedSeconds * 10) / 10,
    seconds: Math.round(seconds * 100) / 100,
    locksPerSecond: Math.round(locks / seconds),
    maturedPerRunner: results.map((r) => r.matured),
    batches: {
      count: batches.length,
      p50Ms: percentile(batches, 50),
      p99Ms: percentile(batches, 99),
      maxMs: Math.round(batches.at(-1) ?? 0),
      totalMs: Math.round(batches.reduce((a, b) => a + b, 0)),
    },
    batchMs: timings.batches.map((ms) => Math.round(ms)),
    statements: [...timings.statements]
      .map(([statement, { count, ms }]) => ({
        statement,
        count,
        totalMs: Math.round(ms),
        averageMs: Math.round((ms / count) * 10) / 10,
      }))
      .sort((a, b) => b.totalMs - a.totalMs),
  };
  return { round, seeded };
}

/**
 * The maturity rounds on a database the service has migrated (and no longer runs on), through a
 * context of its own: sandbox clock, no workers, so nothing but the timed calls matures a lock.
 */
export async function savingsMaturityScenario(
  database: 'pglite' | 'postgres',
  env: Record<string, string>,
): Promise<{ results: ScenarioResult[]; rounds: MaturityRound[]; checks: Check[] }> {
  const locks = Number(process.env.BENCH_MATURITY_LOCKS ?? MATURITY_LOCKS[database]);
  const batchMaxes = numbers(process.env.BENCH_MATURITY_BATCH_MAX) ?? [maturityBatchMax];
  const runnerCounts =
    numbers(process.env.BENCH_MATURITY_RUNNERS) ?? (database === 'postgres' ? [1, 2] : [1]);
  const ctx = await benchContext(env);
  const results: ScenarioResult[] = [];
  const rounds: MaturityRound[] = [];
  const checks: Check[] = [];
  try {
    for (const batchMax of batchMaxes) {
      for (const runners of runnerCounts) {
        const { round, seeded } = await maturityRound(ctx, locks, batchMax, runners);
        rounds.push(round);
        const label = `savingsMaturity batchMax ${batchMax}, ${runners} runner${runners === 1 ? '' : 's'}`;
        process.stdout.write(
          `${database}: ${label}: ${locks} locks in ${round.seconds} s (${round.locksPerSecond} locks/s; seeded in ${round.seedSeconds} s); ${round.batches.count} batches, p50 ${round.batches.p50Ms} ms, p99 ${round.batches.p99Ms} ms, max ${round.batches.maxMs} ms\n`,
        );
        for (const s of round.statements.slice(0, 6)) {
          process.stdout.write(
            `${database}:   ${s.statement}: ${s.count}× ${s.averageMs} ms = ${s.totalMs} ms\n`,
          );
        }
        checks.push(...(await verifyRound(ctx, seeded, round, label)));
        results.push({
          database,
          scenario: runners === 1 ? 'savingsMaturity' : `savingsMaturity ×${runners}`,
          measures: `${locks} locks due at once, ${MATURITY_USERS} users, batchMax ${batchMax}, ${runners} runner${runners === 1 ? '' : 's'}; req/s is locks/s, p50/p99 per batch; ${round.seconds} s`,
          requestsPerSecond: round.locksPerSecond,
          latencyP50Ms: round.batches.p50Ms,
          latencyP99Ms: round.batches.p99Ms,
          requests: locks,
          errors: 0,
          non2xx: 0,
          // In the bench's own process, not the service's.
          serverPeakRssMb: null,
        });
      }
    }
  } finally {
    await ctx.close();
  }
  return { results, rounds, checks };
}
