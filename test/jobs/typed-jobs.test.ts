import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { z } from 'zod';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { defineJob } from '../../src/jobs/job.ts';
import { createJobQueue, type JobQueue, jobDefinition } from '../../src/jobs/queue.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';

// Each job is declared once with the schema of its payload (jobs/job.ts). Enqueueing is typed by it
// (the @ts-expect-error lines below are the compile-time half of this file: typecheck fails if a
// wrong payload ever compiles), and the worker parses every payload before the handler sees it: one
// that does not parse is a failed job, not retried, with one log line naming the job, its id and
// the issue. A real worker runs here, on this file's own database.

const probeJob = defineJob(
  'test.typed-probe',
  z.object({ n: z.number().int(), note: z.string().optional() }),
);

type LogLine = {
  level: number;
  msg: string;
  job?: string;
  jobId?: string;
  issues?: Array<{ path: unknown[] }>;
};

describe(`typed jobs through a worker (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let jobs: JobQueue;
  const lines: LogLine[] = [];
  /** What the handler was given, in order: only payloads that parsed ever reach it. */
  const handled: Array<{ n: number; note?: string | undefined }> = [];
  /** Resolves when the handler sees the payload of this n. */
  const waiting = new Map<number, () => void>();
  const handledNow = (n: number) => new Promise<void>((resolve) => waiting.set(n, resolve));

  before(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.target);
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(JSON.parse(String(chunk)) as LogLine);
          done();
        },
      }),
    );
    jobs = await createJobQueue(database, { logger, runWorkers: true });
    await jobs.define([
      jobDefinition(probeJob, {
        // Retries are allowed, and far off: a job that is retried shows as `retry`, never run again here.
        retryLimit: 3,
        retryDelaySeconds: 3600,
        expireInSeconds: 60,
        handler: async (data) => {
          handled.push(data);
          waiting.get(data.n)?.();
          if (data.n === 2) throw new Error('the handler failed');
        },
      }),
    ]);
  });
  after(async () => {
    await jobs?.stop();
    await database?.close();
    await testDatabase?.drop();
  });

  const stateOf = async (id: string) => {
    const { rows } = await sql<{ state: string; retry_count: number; output: unknown }>`
      select state, retry_count, output from pgboss.job where id = ${id}`.execute(database.db);
    return rows[0];
  };

  it('fails a payload that does not parse, without retry and without the handler, and logs it once', async () => {
    // @ts-expect-error: n is a number in probeJob's schema; the typed send refuses this at compile time.
    const bad = await jobs.send(probeJob, { n: 'one' });
    const thrown = await jobs.send(probeJob, { n: 2 });
    const good = await jobs.send(probeJob, { n: 3, note: 'fine' });
    assert.ok(bad !== null && thrown !== null && good !== null);
    // One job a fetch, in order of creation: once the third is handled, the first two are settled.
    const third = handledNow(3);
    await jobs.startWorkers();
    await third;

    assert.deepEqual(
      handled.map((data) => data.n),
      [2, 3],
      'the handler never saw the payload that does not parse',
    );
    const badJob = await stateOf(bad);
    assert.equal(badJob?.state, 'failed', 'failed for good');
    assert.equal(badJob?.retry_count, 0, 'not retried, though the queue allows 3');
    // The other outcomes stay each job's own: a handler that throws is retried later.
    assert.equal((await stateOf(thrown))?.state, 'retry');

    const logged = lines.filter((line) => line.msg.startsWith('job payload does not parse'));
    assert.equal(logged.length, 1, 'one line');
    assert.equal(logged[0]!.level, 50, 'at error level');
    assert.equal(logged[0]!.job, probeJob.name);
    assert.equal(logged[0]!.jobId, bad);
    assert.deepEqual(
      logged[0]!.issues?.map((issue) => issue.path),
      [['n']],
    );
  });

  it('runNow parses as the worker does: a payload that does not parse never reaches the handler', async () => {
    const before = handled.length;
    // @ts-expect-error: a payload without n does not type either.
    const run = jobs.runNow(probeJob, { note: 'no n' });
    await assert.rejects(run, /test\.typed-probe: payload does not parse/);
    assert.equal(handled.length, before);
    await jobs.runNow(probeJob, { n: 4 });
    assert.deepEqual(handled.at(-1), { n: 4 });
  });

  it("logs pg-boss's warnings (a slow query, a listener it could not open) at warn", () => {
    jobs.boss.emit('warning', { message: 'slow query', data: { type: 'slow_query', elapsed: 31 } });
    const logged = lines.filter((line) => line.msg === 'job queue warning: slow query');
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.level, 40);
  });

  it('refuses a second declaration of a queue name, and a queue it does not know', async () => {
    const twin = defineJob(probeJob.name, z.object({ other: z.string() }));
    await assert.rejects(jobs.send(twin, { other: 'x' }), /declared twice/);
    await assert.rejects(
      jobs.send(defineJob(`no.such.queue.${randomUUID()}`, z.object({})), {}),
      /unknown job queue/,
    );
  });
});
