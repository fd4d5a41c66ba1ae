import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createFollowingClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { defineJob, noPayload } from '../../src/jobs/job.ts';
import { createJobQueue, jobDefinition } from '../../src/jobs/queue.ts';
import { linkSandboxClock } from '../../src/providers/sandbox/clock-link.ts';
import { until } from '../helpers/until.ts';

// A service process's following of a standalone sandbox's clock (src/providers/sandbox/clock-link.ts)
// against a stand-in sandbox whose clock the test sets, and the job queue's hook that refreshes it
// before a worker runs a batch.

const logger = pino({ level: 'silent' });
/** The base clock stands still: a reading is then exactly the sandbox's time. */
const base = { now: () => new Date('2026-01-01T00:00:00.000Z') };
const anHour = 3_600_000;

describe('following a standalone sandbox clock', () => {
  let sandboxNow = new Date('2026-03-01T00:00:00.000Z');
  let reads = 0;
  let answering = true;
  let server: http.Server;
  let url: string;

  before(async () => {
    server = http.createServer((request, response) => {
      if (request.url !== '/__sandbox/clock' || !answering) {
        response.writeHead(503).end();
        return;
      }
      reads += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: true, data: { now: sandboxNow.toISOString() } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads it at start, never goes back, and refreshes a stale reading before a batch', async () => {
    let monotonic = 0;
    const clock = createFollowingClock(base);
    const link = await linkSandboxClock({
      sandboxUrl: url,
      clock,
      base,
      // Longer than the test: only the test's own calls read the clock.
      pollMs: anHour,
      startTimeoutMs: 10_000,
      logger,
      monotonicMs: () => monotonic,
    });
    try {
      assert.equal(clock.now().toISOString(), sandboxNow.toISOString(), 'read at start');
      const readsAtStart = reads;
      sandboxNow = new Date(sandboxNow.getTime() + 7 * 86_400_000);
      await link.refreshIfStale();
      assert.equal(reads, readsAtStart, 'a fresh reading is not read again');
      monotonic += anHour;
      await link.refreshIfStale();
      assert.equal(reads, readsAtStart + 1, 'a reading as old as the poll period is');
      assert.equal(clock.now().toISOString(), sandboxNow.toISOString());
      // The clock-jobs call's time is followed at once; an earlier one changes nothing.
      const moved = new Date(sandboxNow.getTime() + 60_000);
      link.follow(moved);
      link.follow(new Date(moved.getTime() - 30_000));
      assert.equal(clock.now().toISOString(), moved.toISOString());
    } finally {
      link.stop();
    }
  });

  it('fails the start, naming SANDBOX_URL, when the sandbox does not answer within the bound', async () => {
    answering = false;
    try {
      await assert.rejects(
        linkSandboxClock({
          sandboxUrl: url,
          clock: createFollowingClock(base),
          base,
          pollMs: anHour,
          startTimeoutMs: 500,
          logger,
        }),
        /the sandbox at SANDBOX_URL=http:\/\/127\.0\.0\.1:\d+ did not answer GET \/__sandbox\/clock within 0\.5 s \(.*HTTP 503.*\): start it first/,
      );
    } finally {
      answering = true;
    }
  });
});

const probeJob = defineJob('test.probe', noPayload);

describe('the job queue before a batch', () => {
  it('runs the beforeBatch hook before the jobs a worker fetched', async () => {
    const database = await openDatabase({ kind: 'pglite', dataDir: null });
    const happened: string[] = [];
    const jobs = await createJobQueue(database, {
      logger,
      runWorkers: true,
      beforeBatch: async () => {
        happened.push('refresh');
      },
    });
    try {
      await jobs.define([
        jobDefinition(probeJob, {
          retryLimit: 0,
          retryDelaySeconds: 1,
          expireInSeconds: 60,
          handler: async () => {
            happened.push('job');
          },
        }),
      ]);
      await jobs.startWorkers();
      await jobs.send(probeJob, {});
      await until(() => happened.includes('job'), 'the job ran');
      assert.deepEqual(happened.slice(happened.indexOf('job') - 1), ['refresh', 'job']);
    } finally {
      await jobs.stop();
      await database.close();
    }
  });
});
