import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { newId } from '../../src/ids.ts';
import { systemAccounts, userAccount, userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { post as postLedger } from '../../src/ledger/postings.ts';
import { nairaToKobo } from '../../src/money.ts';
import { vtuDispatchJob } from '../../src/vtu/dispatch.ts';
import { purchasePostings, type VtuTransactionView } from '../../src/vtu/purchases.ts';
import { advanceClock } from '../auth/support.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/free-port.ts';
import { createWorld, ok, post, type Reachable, signIn, type World } from '../helpers/world.ts';
import { PIN } from './purchase-support.ts';

// The crash requirement: a process killed after the debit and before (and during) the
// provider call, then restarted, leaves every purchase resolved, no reference sent twice with
// different content, and the ledger whole. The service runs as a child process (`node src/main.ts`)
// that is killed with SIGKILL and started again on the same PostgreSQL database.
//
// The simulated provider must outlive the killed process, so it lives here: a World in this process
// hosts the sandbox simulators, and the child reaches them (SANDBOX_VTU_BASE_URL) through a
// recording proxy, which keeps every request the provider was sent and can lose one on the wire.

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));
const START_TIMEOUT_MS = 60_000;
const SETTLE_TIMEOUT_MS = 30_000;
/** Each scenario starts the service twice; a hang fails it, even without the runner's --test-timeout. */
const SCENARIO_TIMEOUT_MS = 120_000;
/** The first requery of an unanswered purchase comes 60 s after it was sent (src/vtu/purchases.ts). */
const PAST_FIRST_REQUERY_SECONDS = 61;
/** A reference the provider still does not know 15 minutes after it was sent is failed (requeryDefaults). */
const PAST_NOT_FOUND_SECONDS = 15 * 60;
/** The advisory-lock namespace (first key) with which this test holds purchases back from being claimed. */
const HOLD_LOCK_CLASS = 7_007;

/** An MTN number (0803) ending in the given digit: the sandbox VTpass reads its outcome from it. */
const mtn = (last: string) => `0803${String(randomInt(1_000_000)).padStart(6, '0')}${last}`;
/** The second advisory-lock key of a recipient, as the trigger below computes it: its last 9 digits. */
const holdKey = (phone: string) => Number(phone.slice(-9));

describe('VTU purchases across a killed process (PostgreSQL)', {
  skip: onPostgres()
    ? false
    : 'needs DATABASE_URL: the crash is a SIGKILLed process restarted on the same PostgreSQL database; a killed PGlite data directory proves something else',
}, () => {
  let world: World;
  let proxy: RecordingProxy;
  let database: TestDatabase;
  let databaseUrl: string;
  let dataDir: string;
  /** This test's own connection to the service's database: funding, inspection, locks. */
  let db: Database;
  const running = new Set<ServiceProcess>();

  before(async () => {
    world = await createWorld();
    // The timeout digit's request stays unanswered for as long as the service lives.
    world.ctx.sandbox!.state.bills.timeoutHoldMs = 120_000;
    proxy = await startRecordingProxy(world.baseUrl);
    database = await createTestDatabase();
    assert.equal(database.target.kind, 'postgres');
    if (database.target.kind === 'postgres') databaseUrl = database.target.url;
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-crash-'));
  });

  // A failed assertion can leave a service running, whose job worker would then take part in the
  // next scenario: none outlives its test.
  afterEach(async () => {
    for (const service of running) await service.kill();
  });

  after(async () => {
    for (const service of running) await service.kill();
    await db?.close();
    await proxy?.close();
    await world?.close();
    await database?.drop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  /** Starts `node src/main.ts` on the test database; resolves once /healthz answers. */
  async function startService(options: { worker: boolean }): Promise<ServiceProcess> {
    const service = await spawnService({
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      SANDBOX_VTU_BASE_URL: proxy.url,
      // Longer than any test step: the call in flight at the kill is still waiting for its answer.
      VTU_TIMEOUT_MS: '60000',
      WORKER: options.worker ? '1' : '0',
    });
    running.add(service);
    service.exited.then(() => running.delete(service));
    // The service migrates the database on its first start; only then can this test use it.
    db ??= await openDatabase({ kind: 'postgres', url: databaseUrl, poolMax: 4 });
    return service;
  }

  /** A user of the service at Tier 1 with a PIN and `naira` in the wallet, through its own API. */
  async function buyer(service: Reachable, naira: number) {
    const user = await signIn(service);
    const auth = { token: user.accessToken };
    const tier = ok(
      await post<{ status: string }>(service, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, auth),
    );
    assert.equal(tier.status, 'approved');
    ok(await post(service, 'setTransactionPin', { pin: PIN }, auth));
    // Credited as a verified top-up would be (collections pool → wallet).
    await postLedger(
      db.db,
      {
        reference: `test-funding:${newId()}`,
        description: 'Test funding',
        entries: [
          { account: systemAccounts.collectionsPool, amount: -nairaToKobo(naira) },
          { account: userAccount('wallet', user.userId), amount: nairaToKobo(naira) },
        ],
      },
      new Date(),
    );
    return {
      ...user,
      buyAirtime: (phone: string, amount: number) => buyAirtime(service, user.accessToken, phone, amount),
    };
  }

  const purchaseRow = (id: string) =>
    db.db.selectFrom('vtu_transactions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const wallet = async (userId: string) => (await userBalances(db.db, userId)).wallet;
  /** The ledger postings of a purchase (debit, settle, refund), by kind. */
  const postingsOf = async (reference: string) => {
    const rows = await db.db
      .selectFrom('ledger_transactions')
      .select('reference')
      .where(
        'reference',
        'in',
        Object.values(purchasePostings).map((of) => of(reference)),
      )
      .execute();
    return rows.map((r) => r.reference.split(':').at(-1)).sort();
  };
  const dispatchJobStates = async (id: string) =>
    (
      await sql<{ state: string }>`
        select state from pgboss.job where name = ${vtuDispatchJob.name} and data->'ids' @> to_jsonb(${id}::text)`.execute(
        db.db,
      )
    ).rows.map((r) => r.state);

  /** What every scenario ends with: nothing left processing, the ledger whole, each reference sent once. */
  async function assertAllResolved(): Promise<void> {
    const processing = await db.db
      .selectFrom('vtu_transactions')
      .select(['reference', 'recipient'])
      .where('status', '=', 'processing')
      .execute();
    assert.deepEqual(processing, [], 'every purchase is resolved');
    const check = await checkLedger(db.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
    for (const [reference, pays] of Map.groupBy(proxy.pays(), (pay) => pay.request_id)) {
      assert.equal(pays.length, 1, `${reference} was sent to the provider ${pays.length} times`);
      // And what was sent is what was accepted (and charged for).
      const row = await db.db
        .selectFrom('vtu_transactions')
        .selectAll()
        .where('reference', '=', reference)
        .executeTakeFirstOrThrow();
      const stored = (typeof row.request === 'string' ? JSON.parse(row.request) : row.request) as {
        amountKobo: string;
      };
      assert.equal(pays[0]?.phone, row.recipient);
      assert.equal(nairaToKobo(Number(pays[0]?.amount)), BigInt(stored.amountKobo));
    }
  }

  it('killed during the provider call: the answer lost is requeried, the request lost is failed and refunded, each once', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    const first = await startService({ worker: true });
    const user = await buyer(first, 5_000);

    // Delivered by the provider, whose answer never comes (last digit 4).
    const answerLost = await user.buyAirtime(mtn('4'), 500);
    // Any other digit would succeed at once, but the proxy swallows this one: the provider never hears of it.
    const requestLostPhone = mtn('6');
    proxy.swallowPaysTo(requestLostPhone);
    const requestLost = await user.buyAirtime(requestLostPhone, 300);
    for (const accepted of [answerLost, requestLost]) assert.equal(accepted.status, 'processing');

    const orders = world.ctx.sandbox!.state.bills.orders;
    await eventually('the provider holds the first order and the second is on the wire', () =>
      orders.has(answerLost.reference) && proxy.swallowed(requestLost.reference) ? true : undefined,
    );
    await first.kill();

    // What the crash left: both charged, both claimed as sent, neither answered.
    for (const accepted of [answerLost, requestLost]) {
      const row = await purchaseRow(accepted.id);
      assert.equal(row.status, 'processing');
      assert.notEqual(row.sent_at, null);
    }
    const charged = nairaToKobo(answerLost.amount) + nairaToKobo(requestLost.amount);
    assert.equal(await wallet(user.userId), nairaToKobo(5_000) - charged);

    const second = await startService({ worker: true });
    // The requery, under the same reference: the provider says delivered; it has no record of the other.
    await advanceClock(second, PAST_FIRST_REQUERY_SECONDS);
    assert.equal((await purchaseRow(answerLost.id)).status, 'success');
    assert.equal(
      (await purchaseRow(requestLost.id)).status,
      'processing',
      'not refunded while it may yet arrive',
    );
    assert.equal(await wallet(user.userId), nairaToKobo(5_000) - charged);
    // Still unknown to the provider a quarter of an hour after it was sent: it never arrived.
    await advanceClock(second, PAST_NOT_FOUND_SECONDS);
    const refunded = await purchaseRow(requestLost.id);
    assert.equal(refunded.status, 'failed');

    assert.equal(await wallet(user.userId), nairaToKobo(5_000) - nairaToKobo(answerLost.amount));
    assert.deepEqual(await postingsOf(answerLost.reference), ['debit', 'settle']);
    assert.deepEqual(await postingsOf(requestLost.reference), ['debit', 'refund']);
    const delivered = orders.get(answerLost.reference);
    assert.equal(delivered?.status, 'delivered');
    assert.equal(delivered.phone, answerLost.recipient);
    assert.equal(delivered.amountKobo, nairaToKobo(500));
    assert.equal(orders.has(requestLost.reference), false, 'the lost request never reached the provider');
    for (const accepted of [answerLost, requestLost]) {
      const pays = proxy.pays().filter((pay) => pay.request_id === accepted.reference);
      assert.equal(pays.length, 1, `${accepted.reference}: one /pay, none again after the restart`);
    }
    assert.ok(proxy.requeries().includes(answerLost.reference), 'settled by a requery');
    assert.ok(proxy.requeries().includes(requestLost.reference), 'failed only after the provider was asked');
    await assertAllResolved();
    assert.deepEqual(await second.stop(), { code: 0, signal: null });
  });

  const dropHoldTrigger = async () => {
    await sql`drop trigger if exists crash_test_hold_claim on vtu_transactions`.execute(db.db);
    await sql`drop function if exists crash_test_hold_claim()`.execute(db.db);
  };

  it('killed after the debit, before the provider call: the durable job sends each purchase once after the restart', {
    timeout: SCENARIO_TIMEOUT_MS,
  }, async () => {
    // No job worker in the first life: a dispatch job fetched by a killed worker would wait for its
    // expiry (120 s) before being retried; here it stays queued, as it does for a process killed
    // before its worker polled.
    const first = await startService({ worker: false });
    const user = await buyer(first, 5_000);

    // The claim (the UPDATE that sets sent_at before the provider call) waits for an advisory lock
    // this test holds, per recipient, so that the process can be killed between its commit of the
    // debit and its claim.
    await sql`
      create function crash_test_hold_claim() returns trigger language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(${sql.lit(HOLD_LOCK_CLASS)}, right(new.recipient, 9)::int);
        return new;
      end $$`.execute(db.db);
    await sql`
      create trigger crash_test_hold_claim before update on vtu_transactions for each row
      when (old.sent_at is null and new.sent_at is not null) execute function crash_test_hold_claim()`.execute(
      db.db,
    );
    const locks = new pg.Client({ connectionString: databaseUrl });
    await locks.connect();
    try {
      const succeeds = mtn('5');
      const fails = mtn('1'); // the provider refuses it: refunded
      for (const phone of [succeeds, fails])
        await locks.query('select pg_advisory_lock($1, $2)', [HOLD_LOCK_CLASS, holdKey(phone)]);

      const toSucceed = await user.buyAirtime(succeeds, 400);
      const toFail = await user.buyAirtime(fails, 250);
      // The first claim waits for the test's lock holding its provider's float reservation row, which
      // a claim locks before deciding (decision 0051): the second claim waits for that row.
      const waiting = await eventually('both claims wait for the test', async () => {
        const { rows } = await locks.query<{ pid: number; advisory: boolean }>(
          `select a.pid, exists (select 1 from pg_locks l where l.pid = a.pid and not l.granted
             and l.locktype = 'advisory' and l.classid::int8 = $1 and l.objid::int8 = any($2)) as advisory
           from pg_stat_activity a
           where a.datname = current_database() and a.wait_event_type = 'Lock' and a.pid <> pg_backend_pid()`,
          [HOLD_LOCK_CLASS, [holdKey(succeeds), holdKey(fails)]],
        );
        // The claim waiting for the row is ended first: ended after the other, it would get the row and
        // could end by itself (its client gone) before the test ends it.
        const waiters = rows.toSorted((a, b) => Number(a.advisory) - Number(b.advisory));
        return rows.length === 2 && rows.some((r) => r.advisory) ? waiters.map((r) => r.pid) : undefined;
      });
      await first.kill();

      // PostgreSQL does not notice a dead client while its statement waits for a lock (unless
      // client_connection_check_interval is set; it is off by default), and would commit the orphaned
      // claim once the lock is free: claimed, never sent, the first scenario's lost request. Here the
      // claims must die with the process, so the test ends their sessions as that check would.
      for (const pid of waiting) {
        const { rows } = await locks.query<{ ended: boolean }>(
          'select pg_terminate_backend($1, 10000) as ended',
          [pid],
        );
        assert.equal(rows[0]?.ended, true, `the orphaned claim ${pid} ended`);
      }
      // Unlocked first: dropping the trigger waits for every statement on the table, and a claim still
      // waiting for these locks would wait for this test in turn.
      await locks.query('select pg_advisory_unlock_all()');
      await dropHoldTrigger();

      // What the crash left: charged, never claimed, never sent; only the job committed with the debit.
      for (const accepted of [toSucceed, toFail]) {
        const row = await purchaseRow(accepted.id);
        assert.equal(row.status, 'processing');
        assert.equal(row.sent_at, null);
        assert.deepEqual(await dispatchJobStates(accepted.id), ['created']);
        assert.equal(proxy.pays().filter((pay) => pay.request_id === accepted.reference).length, 0);
      }
      const charged = nairaToKobo(toSucceed.amount) + nairaToKobo(toFail.amount);
      assert.equal(await wallet(user.userId), nairaToKobo(5_000) - charged);

      // The restarted service's worker runs the queued jobs; no clock is moved, so no requery sends them.
      const second = await startService({ worker: true });
      await eventually(
        'the restarted service settles both',
        async () => {
          const rows = await Promise.all([toSucceed, toFail].map((p) => purchaseRow(p.id)));
          return rows.every((row) => row.status !== 'processing') ? true : undefined;
        },
        SETTLE_TIMEOUT_MS,
      );
      assert.equal((await purchaseRow(toSucceed.id)).status, 'success');
      const failed = await purchaseRow(toFail.id);
      assert.equal(failed.status, 'failed');
      assert.ok(failed.failure_reason !== null);
      // pg-boss completes a job once its handler has returned, after the settlement committed.
      for (const accepted of [toSucceed, toFail])
        await eventually(
          'the dispatch job completed',
          async () => ((await dispatchJobStates(accepted.id)).join() === 'completed' ? true : undefined),
          SETTLE_TIMEOUT_MS,
        );

      assert.equal(await wallet(user.userId), nairaToKobo(5_000) - nairaToKobo(toSucceed.amount));
      assert.deepEqual(await postingsOf(toSucceed.reference), ['debit', 'settle']);
      assert.deepEqual(await postingsOf(toFail.reference), ['debit', 'refund']);
      const orders = world.ctx.sandbox!.state.bills.orders;
      assert.equal(orders.get(toSucceed.reference)?.status, 'delivered');
      assert.equal(orders.get(toFail.reference)?.status, 'failed');
      for (const accepted of [toSucceed, toFail]) {
        const pays = proxy.pays().filter((pay) => pay.request_id === accepted.reference);
        assert.equal(pays.length, 1, `${accepted.reference}: sent once, after the restart`);
      }
      await assertAllResolved();
      assert.deepEqual(await second.stop(), { code: 0, signal: null });
    } finally {
      await locks.end();
      await dropHoldTrigger();
    }
  });
});

/** Buys airtime (MTN) through the service's API; returns the accepted purchase. */
async function buyAirtime(
  service: Reachable,
  token: string,
  phone: string,
  amount: number,
): Promise<VtuTransactionView> {
  return ok(
    await post<VtuTransactionView>(
      service,
      'buyAirtime',
      { network: 'mtn', phone, amount, pin: PIN },
      { token },
    ),
  );
}

/**
 * Polls a condition that another process brings about, until it yields a value or the deadline passes.
 * Only the deadline is timed: nothing asserts how long anything took.
 */
async function eventually<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// ---- The service as a child process ----

type Exit = { code: number | null; signal: NodeJS.Signals | null };

type ServiceProcess = Reachable & {
  exited: Promise<Exit>;
  /** SIGKILL: no handler runs, nothing is finished or closed. */
  kill(): Promise<void>;
  /** SIGTERM: the graceful stop. */
  stop(): Promise<Exit>;
};

async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    // A clean environment: nothing of the test runner's (NODE_TEST_CONTEXT, its DATABASE_URL) leaks in.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      NODE_ENV: 'test',
      SANDBOX: '1',
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
      RATE_LIMIT_PHONE_PER_MINUTE: '100000',
      LOG_LEVEL: 'warn',
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let exit: Exit | undefined;
  void exited.then((e) => {
    exit = e;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    baseUrl,
    exited,
    async kill() {
      if (exit !== undefined) return;
      child.kill('SIGKILL');
      assert.equal((await exited).signal, 'SIGKILL');
    },
    async stop() {
      if (exit === undefined) child.kill('SIGTERM');
      return exited;
    },
  };
  try {
    await eventually(
      'the service answers /healthz',
      async () => {
        if (exit !== undefined) throw new Error(`the service exited (${JSON.stringify(exit)}):\n${output}`);
        const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(
          () => undefined,
        );
        return response?.status === 200 ? true : undefined;
      },
      START_TIMEOUT_MS,
    );
  } catch (error) {
    await service.kill();
    throw error;
  }
  return service;
}

// ---- Between the service and its providers ----

/** A /pay body as the VTpass adapter sends it. */
type Pay = { request_id: string; phone?: string; amount?: number; [field: string]: unknown };

type RecordingProxy = {
  url: string;
  /** Every /pay the service sent, whether or not it was passed on. */
  pays(): Pay[];
  /** The references of every /requery the service sent. */
  requeries(): string[];
  /** From now on, a /pay to this phone is taken in and never passed on nor answered: lost on the wire. */
  swallowPaysTo(phone: string): void;
  swallowed(reference: string): boolean;
  close(): Promise<void>;
};

/**
 * Stands where the network is: passes every request on to the simulators (`target`) and their answers
 * back, and records what the providers were sent, which the simulators' state cannot show (a second
 * /pay under a known reference is refused there and leaves no trace).
 */
async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const received: Array<{ path: string; body: Record<string, unknown> }> = [];
  const swallowPhones = new Set<string>();
  const swallowedReferences = new Set<string>();
  const hopByHop = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

  const server = http.createServer(async (request, response) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = body === '' ? {} : (JSON.parse(body) as Record<string, unknown>);
      received.push({ path: request.url ?? '', body: parsed });
      if (request.url?.endsWith('/pay') === true && swallowPhones.has(String(parsed.phone))) {
        swallowedReferences.add(String(parsed.request_id));
        return; // No answer; the socket goes when the service does (or when the proxy closes).
      }
      // A caller that goes away (the killed service) takes its upstream request with it.
      const upstream = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) upstream.abort();
      });
      const headers = Object.entries(request.headers).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string' && !hopByHop.has(entry[0]),
      );
      const answer = await fetch(`${target}${request.url}`, {
        method: request.method ?? 'GET',
        headers,
        ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body }),
        signal: upstream.signal,
      });
      const answerBody = Buffer.from(await answer.arrayBuffer());
      response.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
      });
      response.end(answerBody);
    } catch {
      // The provider dropped the connection (or the caller went away): so does the proxy.
      response.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  const bodiesAt = (suffix: string) => received.filter((r) => r.path.endsWith(suffix)).map((r) => r.body);
  return {
    url: `http://127.0.0.1:${address.port}`,
    pays: () => bodiesAt('/pay') as Pay[],
    requeries: () => bodiesAt('/requery').map((body) => String(body.request_id)),
    swallowPaysTo: (phone) => swallowPhones.add(phone),
    swallowed: (reference) => swallowedReferences.has(reference),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
