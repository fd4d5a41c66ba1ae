import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import type { JobQueue } from '../jobs/queue.ts';

// POST /api/internal/sandbox/clock-jobs: the service's side of the sandbox clock (API.md section 12).
// POST /__sandbox/clock moves the sandbox clock, then calls this route over HTTP, as any outside
// party reaches the service, and answers only once this one has: everything that became due by the
// new time (matured locks, requeries, reconciliation, ...) has happened before the tester reads on.
// Registered only in the sandbox, hidden from /openapi.json and outside the rate limits, it runs the
// clock-driven jobs for whoever shows the sandbox's token (`Authorization: Bearer <token>`), a random
// secret the composition root gives to both sides, so that a stranger who knows the path cannot
// make the service run them.

export const sandboxClockJobsPath = '/api/internal/sandbox/clock-jobs';

export type SandboxClockRouteDeps = {
  jobs: Pick<JobQueue, 'runClockDrivenJobs'>;
  /** The sandbox's credential (Sandbox.clockJobsToken; SANDBOX_CLOCK_TOKEN with a standalone sandbox). */
  token: string;
  /**
   * With a standalone sandbox: follows the sandbox's new `now`, which it sends in the
   * `X-Sandbox-Now` header, before the jobs run (an in-process sandbox's clock is this process's own).
   */
  followSandboxNow?: (now: Date) => void;
};

/** The header the sandbox's clock-jobs call carries its clock's new time in (ISO 8601). */
export const sandboxNowHeader = 'x-sandbox-now';

export function registerSandboxClockRoute(app: FastifyInstance, deps: SandboxClockRouteDeps): void {
  const expected = digest(`Bearer ${deps.token}`);
  app.post(
    sandboxClockJobsPath,
    { schema: { hide: true }, config: { rateLimit: false } },
    async (request, reply) => {
      const given = request.headers.authorization;
      // Digests of equal length, so the comparison takes the same time whatever was sent.
      if (typeof given !== 'string' || !timingSafeEqual(digest(given), expected)) {
        throw new AppError('UNAUTHENTICATED', 'the sandbox clock token is required');
      }
      if (deps.followSandboxNow !== undefined) {
        const raw = request.headers[sandboxNowHeader];
        const now = typeof raw === 'string' ? new Date(raw) : undefined;
        if (now === undefined || Number.isNaN(now.getTime())) {
          throw new AppError('VALIDATION_ERROR', `${sandboxNowHeader}: the sandbox clock's time (ISO 8601)`);
        }
        deps.followSandboxNow(now);
      }
      await deps.jobs.runClockDrivenJobs();
      return reply.code(204).send();
    },
  );
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
