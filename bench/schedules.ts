import { buildApp } from '../src/app.ts';
import { type Context, createContext } from '../src/context.ts';
import { newId } from '../src/ids.ts';
import { systemAccounts, userAccount } from '../src/ledger/accounts.ts';
import { checkLedger } from '../src/ledger/check.ts';
import { postBatch } from '../src/ledger/postings.ts';
import { choosePort } from '../src/listen-port.ts';
import { runDueSchedules } from '../src/schedules/runner.ts';
import { orderSchemas } from '../src/schedules/schemas.ts';
import { benchConfig, type Check, insertUsers, percentile, type ScenarioResult } from './common.ts';

// scheduledRuns: 1,000 scheduled purchases falling due at the same instant (BENCH_SCHEDULES), run by
// the schedules' own runner (runDueSchedules: claims of 100 under SKIP LOCKED, the purchases through
// the vtu api's one pipeline, the finishing update) in the bench process, on the service's database
// after the service stopped, with the app listening so that the purchases reach the sandbox VTpass
// over HTTP as in production. On PostgreSQL a second round runs two runners at once. Measured: runs
// per second from the first claim to the last purchase settled, and the ledger check after.

const SCHEDULES: Record<'pglite' | 'postgres', number> = { pglite: 1_000, postgres: 1_000 };
/** Schedules per user (within the 50 open a user may keep), so a wallet's lock is shared by a few. */
const SCHEDULES_PER_USER = 10;

type Seeded = { userIds: string[]; scheduleIds: string[] };

/** Users at Tier 1 with funded wallets, and their schedules, all due now: written in bulk. */
async function seed(ctx: Context, count: number): Promise<Seeded> {
  const now = ctx.clock.now();
  const users = await insertUsers(ctx.db, Math.ceil(count / SCHEDULES_PER_USER), now);
  const userIds = users.map((user) => user.id);
  await ctx.db.updateTable('users').set({ kyc_tier: 1 }).where('id', 'in', userIds).execute();
  await ctx.db.transaction().execute((trx) =>
    postBatch(
      trx,
      users.map((user) => ({
        reference: `bench-schedules-funding:${newId()}`,
        description: 'Bench funding',
        entries: [
          { account: systemAccounts.collectionsPool, amount: -1_000_000n },
          { account: userAccount('wallet', user.id), amount: 1_000_000n },
        ],
      })),
      now,
    ),
  );
  const rows = Array.from({ length: count }, (_, i) => {
    // An MTN number the sandbox delivers at once (its last digit is not an outcome digit).
    const phone = `0803${String(i).padStart(6, '0')}5`;
    const order = orderSchemas.airtime.parse({ network: 'mtn', phone, amount: 100 });
    return {
      id: newId(),
      user_id: userIds[i % userIds.length]!,
      service: 'airtime',
      order_fields: JSON.stringify(order),
      every: 'day',
      starts_at: now,
      ends_at: null,
      runs_max: null,
      price_tolerance_percent: 0,
      status: 'active' as const,
      next_run_at: now,
      runs: 0,
      skips_in_row: 0,
      paused_reason: null,
      created_at: now,
      updated_at: now,
    };
  });
  for (let from = 0; from < rows.length; from += 500) {
    await ctx.db
      .insertInto('schedules')
      .values(rows.slice(from, from + 500))
      .execute();
  }
  return { userIds, scheduleIds: rows.map((row) => row.id) };
}

export type ScheduledRunsRound = {
  schedules: number;
  runners: number;
  seconds: number;
  runsPerSecond: number;
  /** From the first claim to each runner's pass returning (acceptance), ms, p50/p99 of the runners. */
  runnerMs: { p50: number; p99: number };
  ran: number;
  purchases: number;
  succeeded: number;
  ledgerOk: boolean;
};

async function round(
  ctx: Context,
  count: number,
  runners: number,
): Promise<{ round: ScheduledRunsRound; checks: Check[] }> {
  const seeded = await seed(ctx, count);
  const started = performance.now();
  const passes = await Promise.all(
    Array.from({ length: runners }, async () => {
      const t0 = performance.now();
      const counts = await runDueSchedules(scheduleDeps(ctx));
      return { counts, ms: performance.now() - t0 };
    }),
  );
  await ctx.modules.vtu.api.drained();
  const seconds = (performance.now() - started) / 1000;
  const purchases = await ctx.db
    .selectFrom('vtu_transactions')
    .select(['status'])
    .where('user_id', 'in', seeded.userIds)
    .execute();
  const ran = passes.reduce((sum, pass) => sum + pass.counts.ran, 0);
  const succeeded = purchases.filter((p) => p.status === 'success').length;
  const ledger = await checkLedger(ctx.db);
  const sorted = passes.map((pass) => pass.ms).sort((a, b) => a - b);
  const result: ScheduledRunsRound = {
    schedules: count,
    runners,
    seconds: Math.round(seconds * 100) / 100,
    runsPerSecond: Math.round(succeeded / seconds),
    runnerMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99) },
    ran,
    purchases: purchases.length,
    succeeded,
    ledgerOk: ledger.ok,
  };
  const label = `scheduledRuns ${count} due, ${runners} runner${runners === 1 ? '' : 's'}`;
  return {
    round: result,
    checks: [
      {
        name: `${label}: every schedule run once`,
        ok: ran === count && purchases.length === count,
        detail: `${ran} runs, ${purchases.length} purchases for ${count} schedules`,
      },
      { name: `${label}: every run delivered`, ok: succeeded === count, detail: `${succeeded} succeeded` },
      {
        name: `${label}: ledger check`,
        ok: ledger.ok,
        detail: JSON.stringify(ledger.imbalances.slice(0, 3)),
      },
    ],
  };
}

/** The schedules module's deps as the composition root builds them, from the bench's context. */
function scheduleDeps(ctx: Context) {
  return {
    db: ctx.db,
    clock: ctx.clock,
    jobs: ctx.jobs,
    logger: ctx.logger,
    vtu: ctx.modules.vtu.api,
    config: ctx.config.schedules,
  };
}

export async function scheduledRunsScenario(
  database: 'pglite' | 'postgres',
  env: Record<string, string>,
): Promise<{ results: ScenarioResult[]; rounds: ScheduledRunsRound[]; checks: Check[] }> {
  const count = Number(process.env.BENCH_SCHEDULES ?? SCHEDULES[database]);
  const runnerCounts = database === 'postgres' ? [1, 2] : [1];
  // The purchases reach the sandbox simulators over HTTP, as the service's own would: the port is
  // chosen first, so that the context is built with the address it answers at.
  const port = await choosePort(benchConfig({ ...env, PORT: '0' }));
  const ctx = await createContext(port.config);
  const app = await buildApp(ctx);
  await app.ready();
  await port.release();
  await app.listen({ port: port.config.http.port, host: '127.0.0.1' });
  const results: ScenarioResult[] = [];
  const rounds: ScheduledRunsRound[] = [];
  const checks: Check[] = [];
  try {
    for (const runners of runnerCounts) {
      const run = await round(ctx, count, runners);
      rounds.push(run.round);
      checks.push(...run.checks);
      const r = run.round;
      process.stdout.write(
        `${database}: scheduledRuns: ${r.schedules} due at once, ${runners} runner${runners === 1 ? '' : 's'}: ${r.succeeded} delivered in ${r.seconds} s (${r.runsPerSecond} runs/s); ledger check ${r.ledgerOk ? 'ok' : 'FAILED'}\n`,
      );
      results.push({
        database,
        scenario: runners === 1 ? 'scheduledRuns' : `scheduledRuns ×${runners}`,
        measures: `${r.schedules} schedules due at once over ${Math.ceil(r.schedules / SCHEDULES_PER_USER)} users, ${runners} runner${runners === 1 ? '' : 's'}; req/s is runs delivered per second, p50/p99 a runner's pass; ${r.seconds} s`,
        requestsPerSecond: r.runsPerSecond,
        latencyP50Ms: r.runnerMs.p50,
        latencyP99Ms: r.runnerMs.p99,
        requests: r.schedules,
        errors: r.schedules - r.succeeded,
        non2xx: 0,
        serverPeakRssMb: null,
      });
    }
  } finally {
    await app.close();
    await ctx.close();
  }
  return { results, rounds, checks };
}
