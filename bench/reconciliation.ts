import { buildApp } from '../src/app.ts';
import { type Context, createContext } from '../src/context.ts';
import { lagosDate, lagosDayStart } from '../src/lagos-time.ts';
import { choosePort } from '../src/listen-port.ts';
import type { PaymentProvider } from '../src/providers/payments/payment-provider.ts';
import { reconciliationRunJob } from '../src/reconciliation/runs.ts';
import type { Bucket } from '../src/reconciliation/schemas.ts';
import {
  benchConfig,
  type Check,
  eventually,
  getOperation,
  mapConcurrent,
  nextPhone,
  postOperation,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  signIn,
} from './common.ts';

// reconciliation (issue 42): one payments run over a day of payments, as an operator starts it. In
// the bench process on the service's database after the service stopped, with the app listening, so
// that the service reaches its sandbox Paystack over HTTP and the sandbox's webhooks reach the
// service over HTTP, as in production; the sandbox's state is this process's, so the bench can
// change an amount at the provider, as nothing over HTTP can.
//
// The day: the sandbox clock moved to 01:00 Lagos a week ahead, a day no other scenario wrote in.
// BENCH_RECONCILIATION_PAYMENTS (5,000) top-ups are initialised through createTopupIntent over HTTP
// by signed-in users (so the sandbox Paystack holds each transaction, made by the service's own
// initialize call) and paid at the sandbox's checkout: its Pay button, one POST each over HTTP, not
// its state, since the charge.success webhook that follows (stored and credited by the service)
// costs more than the button does. Among them, DISAGREEMENTS of each kind:
//   unpaid          never paid                                        → matched
//   webhook dropped paid while the sandbox drops webhooks: not credited → missingHere
//   amount changed  paid and credited, then its amount at the sandbox changed by ₦1 → amountMismatch
// the rest paid and credited through the webhook → matched. The funding reconcile job, which would
// credit the dropped ones, does not run: this context has no workers.
//
// Timed: adminRunReconciliation over HTTP, then its job run as a worker runs it (fetched from the
// queue, run, completed), then adminGetReconciliation reads it done: seconds from the request to
// done, items per second. The counts must be exactly what was seeded, or the bench fails. The job's
// phases are timed in that same run by watching, in place, what it calls through the context: the
// provider's list pages and verify calls (wrapped on the payment provider object, which the module
// calls through), and the start of the one transaction that writes the items (ctx.db.transaction,
// the module's own db): listing, our side (funding's reads of our records and the comparison in
// memory, the time between the last page and the writing, less verify calls), verify-by-reference,
// writing the items and the counts.

const PAYMENTS = Number(process.env.BENCH_RECONCILIATION_PAYMENTS ?? 5_000);
/** Of each deliberate disagreement: unpaid, webhook dropped, amount changed. */
const DISAGREEMENTS = 5;
/** Top-ups per user, small enough that no wallet nears Tier 0's maximum balance (₦300,000). */
const TOPUPS_PER_USER = 50;
/** Top-ups of ₦100 to ₦999, varied so that the amounts compared are not all one figure. */
const topupNaira = (i: number): number => 100 + ((i * 37) % 900);
/**
 * Intents created and checkouts paid at once: more than the other scenarios' setup, so that the
 * service credits the webhooks in batches as under load, and 5,000 are seeded in about a minute.
 */
const SEED_CONCURRENCY = 50;
const CREDIT_TIMEOUT_MS = 180_000;
const DAY_MS = 86_400_000;
/** Transactions per page the run asks the provider for (src/reconciliation/payments-side.ts). */
const PROVIDER_PAGE = 100;
/** The operator who starts the run: an ADMIN_PHONES number of the bench's context. */
const adminPhone = nextPhone();

const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/** Where the job's time went, ms. */
export type ReconciliationPhases = {
  /** Reading the run's row, up to the first page asked for. */
  startMs: number;
  /** From the first page asked for to the last one read (pages are read one after another). */
  listingMs: number;
  /** Our records of the period (and of references listed outside it), and the comparison in memory. */
  ourSideMs: number;
  verifyByReferenceMs: number;
  /** The one transaction that writes the items and the counts. */
  writingMs: number;
};

export type ReconciliationRound = {
  payments: number;
  items: number;
  counts: Record<Bucket, number>;
  expected: Record<Bucket, number>;
  status: string;
  seconds: number;
  itemsPerSecond: number;
  /** The job alone (both sides read, the items written), ms. */
  jobMs: number;
  providerPages: number;
  verifyCalls: number;
  phases: ReconciliationPhases;
  /** Seeding: signing in, creating the intents, paying them and waiting for the credits. */
  seed: { seconds: number; intentsSeconds: number; paymentsSeconds: number };
};

type Seeded = {
  day: string;
  from: Date;
  to: Date;
  admin: string;
  expected: Record<Bucket, number>;
  seed: ReconciliationRound['seed'];
};

/** What the job called, and when (performance.now()); null until it happened. */
type Watch = {
  pages: number;
  firstPageAt: number | null;
  lastPageAt: number | null;
  verifies: number;
  verifyMs: number;
  /** The start of the latest transaction on the context's db. */
  transactionAt: number | null;
};

/**
 * Watches, in place and without changing what they answer, the provider's list pages and verify
 * calls (on the context's provider object, which the reconciliation module calls through) and the
 * transactions begun on the context's db (the module's own): the job's phases, in the timed run.
 */
function watchRun(ctx: Context): Watch {
  const watch: Watch = {
    pages: 0,
    firstPageAt: null,
    lastPageAt: null,
    verifies: 0,
    verifyMs: 0,
    transactionAt: null,
  };
  const payments: PaymentProvider = ctx.payments;
  const list = payments.listTransactions.bind(payments);
  const verify = payments.verifyTransaction.bind(payments);
  payments.listTransactions = async (request) => {
    watch.firstPageAt ??= performance.now();
    try {
      return await list(request);
    } finally {
      watch.pages += 1;
      watch.lastPageAt = performance.now();
    }
  };
  payments.verifyTransaction = async (reference) => {
    const t0 = performance.now();
    try {
      return await verify(reference);
    } finally {
      watch.verifies += 1;
      watch.verifyMs += performance.now() - t0;
    }
  };
  const transaction = ctx.db.transaction.bind(ctx.db);
  ctx.db.transaction = () => {
    watch.transactionAt = performance.now();
    return transaction();
  };
  return watch;
}

/** The job's phases from what was watched while it ran from jobStart to jobEnd. */
function phasesOf(watch: Watch, jobStart: number, jobEnd: number): ReconciliationPhases {
  const firstPage = watch.firstPageAt ?? jobStart;
  const lastPage = watch.lastPageAt ?? firstPage;
  const writing =
    watch.transactionAt !== null && watch.transactionAt > lastPage ? watch.transactionAt : jobEnd;
  return {
    startMs: Math.round(firstPage - jobStart),
    listingMs: Math.round(lastPage - firstPage),
    ourSideMs: Math.round(writing - lastPage - watch.verifyMs),
    verifyByReferenceMs: Math.round(watch.verifyMs),
    writingMs: Math.round(jobEnd - writing),
  };
}

/** The sandbox's own control: its webhooks delivered, or dropped (recorded, never sent). */
async function setWebhookMode(baseUrl: string, mode: 'deliver' | 'drop'): Promise<void> {
  const response = await fetch(`${baseUrl}/__sandbox/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  if (response.status !== 200)
    throw new Error(`the sandbox's webhook mode answered ${response.status}: ${await response.text()}`);
}

/** The checkout's Pay button, as the payer's browser presses it (a form POST, answered 303). */
async function pay(checkoutUrl: string): Promise<void> {
  const response = await fetch(`${checkoutUrl}/pay`, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  await response.arrayBuffer();
  if (response.status !== 303) throw new Error(`the checkout's Pay answered ${response.status}`);
}

async function creditedBetween(ctx: Context, from: Date, to: Date): Promise<number> {
  const { n } = await ctx.db
    .selectFrom('topup_intents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .where('credited_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** A day of top-ups on both sides, with the deliberate disagreements; answers the day and its bounds. */
async function seed(ctx: Context, baseUrl: string, count: number): Promise<Seeded> {
  const started = performance.now();
  // 01:00 Lagos, a week ahead: every record below is made within that day (minutes of it).
  const now = ctx.clock.now();
  const dayStart = new Date(lagosDayStart(new Date(now.getTime() + 7 * DAY_MS)).getTime() + 3_600_000);
  ctx.sandboxClock!.advance((dayStart.getTime() - now.getTime()) / 1000);
  const from = lagosDayStart(ctx.clock.now());
  const to = new Date(from.getTime() + DAY_MS);

  const admin = await signIn(baseUrl, adminPhone);
  const tokens = await mapConcurrent(
    Array.from({ length: Math.ceil(count / TOPUPS_PER_USER) }, () => nextPhone()),
    SETUP_CONCURRENCY,
    (phone) => signIn(baseUrl, phone),
  );
  const intentsStarted = performance.now();
  const intents = await mapConcurrent(
    Array.from({ length: count }, (_, i) => i),
    SEED_CONCURRENCY,
    async (i) => {
      const created = await postOperation(
        baseUrl,
        'createTopupIntent',
        { amount: topupNaira(i) },
        tokens[i % tokens.length],
      );
      return created.data as { reference: string; checkoutUrl: string };
    },
  );
  const paymentsStarted = performance.now();
  // The first DISAGREEMENTS are never paid; the next are paid with the webhooks dropped; the rest
  // are paid and credited, and of those the first DISAGREEMENTS have their amount changed after.
  const dropped = intents.slice(DISAGREEMENTS, 2 * DISAGREEMENTS);
  const delivered = intents.slice(2 * DISAGREEMENTS);
  const changed = delivered.slice(0, DISAGREEMENTS);

  // Paid while the sandbox drops its webhooks: the provider has the money, we never hear of it.
  await setWebhookMode(baseUrl, 'drop');
  try {
    for (const intent of dropped) await pay(intent.checkoutUrl);
  } finally {
    await setWebhookMode(baseUrl, 'deliver');
  }
  await mapConcurrent(delivered, SEED_CONCURRENCY, (intent) => pay(intent.checkoutUrl));
  // The webhooks arrive and are credited as the service processes them.
  let credited = 0;
  await eventually(
    'every delivered payment credited',
    async () => {
      credited = await creditedBetween(ctx, from, to);
      return credited >= delivered.length;
    },
    () => `(${credited} of ${delivered.length})`,
    CREDIT_TIMEOUT_MS,
  );
  const paymentsEnded = performance.now();
  // The provider's record of these says ₦1 more than was credited.
  const transactions = ctx.sandbox!.state.payments.transactions;
  for (const intent of changed) transactions.get(intent.reference)!.amountKobo += 100n;

  return {
    day: lagosDate(from),
    from,
    to,
    admin,
    seed: {
      seconds: seconds(paymentsEnded - started),
      intentsSeconds: seconds(paymentsStarted - intentsStarted),
      paymentsSeconds: seconds(paymentsEnded - paymentsStarted),
    },
    expected: {
      matched: count - 2 * DISAGREEMENTS,
      missingHere: DISAGREEMENTS,
      missingThere: 0,
      amountMismatch: DISAGREEMENTS,
      statusMismatch: 0,
    },
  };
}

type RunView = { id: string; status: string; counts: Record<Bucket, number>; itemCount: number };

export async function reconciliationScenario(
  database: 'pglite' | 'postgres',
  env: Record<string, string>,
): Promise<{ result: ScenarioResult; round: ReconciliationRound; checks: Check[] }> {
  const port = await choosePort(
    benchConfig({
      ...env,
      PORT: '0',
      ADMIN_PHONES: adminPhone,
      // The sandbox's webhooks and the checkout all come from 127.0.0.1: the limits out of the way,
      // as for the service the bench starts.
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
      RATE_LIMIT_PHONE_PER_MINUTE: '1000000',
    }),
  );
  const ctx = await createContext(port.config);
  const app = await buildApp(ctx);
  await app.ready();
  await port.release();
  await app.listen({ port: port.config.http.port, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${port.config.http.port}`;
  try {
    const seeded = await seed(ctx, baseUrl, PAYMENTS);
    const watch = watchRun(ctx);

    const started = performance.now();
    const run = (
      await postOperation(
        baseUrl,
        'adminRunReconciliation',
        { source: 'payments', from: seeded.day, to: seeded.day },
        seeded.admin,
      )
    ).data as RunView;
    // As a worker runs it: fetched from the queue, its handler, completed.
    const { boss } = ctx.jobs;
    const jobs = await boss.fetch<{ runId: string }>(reconciliationRunJob.name, { batchSize: 10 });
    const job = jobs.find((j) => j.data.runId === run.id);
    if (job === undefined) throw new Error(`the run's job ${run.id} was not queued`);
    const jobStarted = performance.now();
    await ctx.jobs.runNow(reconciliationRunJob, job.data);
    const jobEnded = performance.now();
    await boss.complete(reconciliationRunJob.name, job.id);
    const done = (await getOperation(baseUrl, `adminGetReconciliation?id=${run.id}&limit=1`, seeded.admin))
      .data as RunView;
    const runSeconds = (performance.now() - started) / 1000;
    const round: ReconciliationRound = {
      payments: PAYMENTS,
      items: done.itemCount,
      counts: done.counts,
      expected: seeded.expected,
      status: done.status,
      seconds: Math.round(runSeconds * 100) / 100,
      itemsPerSecond: Math.round(done.itemCount / runSeconds),
      jobMs: Math.round(jobEnded - jobStarted),
      providerPages: watch.pages,
      verifyCalls: watch.verifies,
      phases: phasesOf(watch, jobStarted, jobEnded),
      seed: seeded.seed,
    };
    const counts = (c: Record<Bucket, number>) =>
      `matched ${c.matched}, missingHere ${c.missingHere}, missingThere ${c.missingThere}, amountMismatch ${c.amountMismatch}, statusMismatch ${c.statusMismatch}`;
    const checks: Check[] = [
      {
        name: `reconciliation of ${PAYMENTS} payments: done with every item`,
        ok: done.status === 'done' && done.itemCount === PAYMENTS,
        detail: `${done.status}, ${done.itemCount} items for ${PAYMENTS} payments`,
      },
      {
        name: `reconciliation of ${PAYMENTS} payments: counts as seeded`,
        ok: (Object.keys(seeded.expected) as Bucket[]).every((b) => done.counts[b] === seeded.expected[b]),
        detail: `${counts(done.counts)} (seeded: ${counts(seeded.expected)})`,
      },
      {
        name: `reconciliation of ${PAYMENTS} payments: the provider's list read whole`,
        ok: watch.pages === Math.ceil(PAYMENTS / PROVIDER_PAGE),
        detail: `${watch.pages} pages of ${PROVIDER_PAGE}, ${watch.verifies} verified by reference`,
      },
    ];
    const result: ScenarioResult = {
      database,
      scenario: 'reconciliation',
      measures: `one payments run over a day of ${PAYMENTS} top-ups (${DISAGREEMENTS} unpaid, ${DISAGREEMENTS} webhooks dropped, ${DISAGREEMENTS} amounts changed at the sandbox): adminRunReconciliation over HTTP, its job as a worker runs it, read back done; req/s is items per second, p50/p99 the whole run; ${round.seconds} s, ${watch.pages} provider pages; the job ${round.jobMs} ms: listing ${round.phases.listingMs} ms, our side ${round.phases.ourSideMs} ms, verify-by-reference ${round.phases.verifyByReferenceMs} ms (${watch.verifies} calls), writing the items ${round.phases.writingMs} ms`,
      requestsPerSecond: round.itemsPerSecond,
      latencyP50Ms: Math.round(runSeconds * 1000),
      latencyP99Ms: Math.round(runSeconds * 1000),
      requests: done.itemCount,
      errors: 0,
      non2xx: 0,
      serverPeakRssMb: null,
    };
    return { result, round, checks };
  } finally {
    await app.close();
    await ctx.close();
  }
}
