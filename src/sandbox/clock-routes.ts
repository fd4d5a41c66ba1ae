import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SandboxClock } from '../clock.ts';

// The sandbox clock (API.md section 12): GET /__sandbox/clock reads it, POST /__sandbox/clock moves it
// forward. Whatever became due by the new time must have happened before the answer, so the move is
// followed by a call to the service's clock-jobs route (src/http/sandbox-clock-route.ts), over HTTP
// like every other way the sandbox reaches the service, and the answer waits for the service's.

export type SandboxClockDeps = {
  clock: SandboxClock;
  /** The service's route that runs its clock-driven jobs. */
  clockJobsUrl: string;
  /** The sandbox's credential on that route (Sandbox.clockJobsToken). */
  clockJobsToken: string;
};

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;
/** The most the clock moves in one call: ten years. */
const advanceSecondsMax = 10 * 365 * 24 * 60 * 60;
/** How long the service may take over the jobs a move made due (a large batch of maturing locks). */
const clockJobsTimeoutMs = 5 * 60_000;

const moveBody = z.object({ advanceSeconds: z.number().int().min(0).max(advanceSecondsMax) }).strict();

export function registerSandboxClock(app: FastifyInstance, deps: SandboxClockDeps): void {
  app.get('/__sandbox/clock', routeOptions, async () => clockAnswer(deps.clock));
  app.post('/__sandbox/clock', routeOptions, async (request, reply) => moveClock(deps, request, reply));
}

async function moveClock(deps: SandboxClockDeps, request: FastifyRequest, reply: FastifyReply) {
  const body = moveBody.safeParse(request.body);
  if (!body.success) {
    return reply.code(400).send({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'advanceSeconds: a whole number of seconds ≥ 0' },
    });
  }
  deps.clock.advance(body.data.advanceSeconds);
  await runDueJobs(deps);
  return clockAnswer(deps.clock);
}

/** Asks the service to run what became due, and waits for it; a refusal or failure is a 500 here. */
async function runDueJobs(deps: SandboxClockDeps): Promise<void> {
  const response = await fetch(deps.clockJobsUrl, {
    method: 'POST',
    // The new time goes with the call: a service process that follows a standalone sandbox's clock
    // sets it before it runs the jobs (src/http/sandbox-clock-route.ts reads the header).
    headers: {
      authorization: `Bearer ${deps.clockJobsToken}`,
      'x-sandbox-now': deps.clock.now().toISOString(),
    },
    redirect: 'manual',
    signal: AbortSignal.timeout(clockJobsTimeoutMs),
  });
  await response.arrayBuffer();
  if (!response.ok) {
    throw new Error(`the service's clock-driven jobs answered HTTP ${response.status}`);
  }
}

function clockAnswer(clock: SandboxClock) {
  return { success: true, data: { now: clock.now().toISOString() } };
}
