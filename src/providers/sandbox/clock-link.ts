import type { Logger } from 'pino';
import type { Clock, FollowingClock } from '../../clock.ts';

// A service process's link to the clock of a sandbox that runs as its own process (SANDBOX_URL).
// The sandbox owns the one clock every process reads; each service process follows it: read at
// start-up (waiting, within a bound, for the sandbox to answer), from the `now` the sandbox sends with
// its clock-jobs call (src/http/sandbox-clock-route.ts), by a short poll, and before a worker runs a
// fetched batch when the last reading is older than the poll period, so that a job made due by a
// move (and taken by a process the move's call did not reach) never runs on a stale clock.

export type SandboxClockLink = {
  /** Reads the sandbox clock now and follows it. */
  refresh(): Promise<void>;
  /** Refreshes unless the last reading is younger than the poll period (before a worker's batch). */
  refreshIfStale(): Promise<void>;
  /** Follows the `now` the sandbox sent with its clock-jobs call. */
  follow(sandboxNow: Date): void;
  stop(): void;
};

export type SandboxClockLinkOptions = {
  /** The standalone sandbox's base URL (SANDBOX_URL). */
  sandboxUrl: string;
  clock: FollowingClock;
  /** The clock underneath (the system's; a test's own): readings are timed on it. */
  base: Clock;
  /** How often every process reads the sandbox clock, and how old a reading a worker's batch accepts. */
  pollMs: number;
  /** How long start-up waits for the sandbox to answer before it fails. */
  startTimeoutMs: number;
  logger: Logger;
  /** A monotonic time in ms that readings are aged by (default performance.now; tests pass their own). */
  monotonicMs?: () => number;
};

/** One reading must answer within this; the start-up wait retries until its own bound. */
const readTimeoutMs = 2_000;
/** Between attempts while start-up waits for the sandbox. */
const startRetryMs = 250;

/** Reads the sandbox clock until it answers (or fails after startTimeoutMs), then keeps following it. */
export async function linkSandboxClock(options: SandboxClockLinkOptions): Promise<SandboxClockLink> {
  const { clock, base, pollMs, logger } = options;
  const monotonicMs = options.monotonicMs ?? (() => performance.now());
  const clockUrl = `${options.sandboxUrl}/__sandbox/clock`;
  /** monotonicMs() of the last reading followed: what its age is measured from. */
  let lastReadMs = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | undefined;
  let warned = false;

  const read = async () => {
    const before = base.now().getTime();
    const sandboxNow = await readSandboxClock(clockUrl);
    const after = base.now().getTime();
    clock.follow(sandboxNow, new Date((before + after) / 2));
    lastReadMs = monotonicMs();
    warned = false;
  };
  // Concurrent callers (the poll, several workers' batches) share one request.
  const refresh = () => {
    inFlight ??= read().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  await waitForSandbox(options, refresh);
  const poll = setInterval(() => {
    refresh().catch((error: unknown) => {
      // Once per outage: the clock keeps its last offset meanwhile.
      if (!warned) logger.warn({ err: error, sandboxUrl: options.sandboxUrl }, 'sandbox clock unreadable');
      warned = true;
    });
  }, pollMs);
  poll.unref();

  return {
    refresh,
    async refreshIfStale() {
      if (monotonicMs() - lastReadMs < pollMs) return;
      try {
        await refresh();
      } catch (error) {
        // The batch runs on the last offset rather than not at all: the sandbox being away must not
        // stop the service's own work.
        logger.warn({ err: error }, 'sandbox clock unreadable before a job batch; the last reading stands');
      }
    },
    follow(sandboxNow) {
      clock.follow(sandboxNow);
      lastReadMs = monotonicMs();
    },
    stop: () => clearInterval(poll),
  };
}

async function waitForSandbox(options: SandboxClockLinkOptions, refresh: () => Promise<void>): Promise<void> {
  const deadline = performance.now() + options.startTimeoutMs;
  let lastError: unknown;
  while (performance.now() < deadline) {
    try {
      await refresh();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, startRetryMs));
    }
  }
  const why = lastError instanceof Error ? lastError.message : String(lastError);
  throw new Error(
    `the sandbox at SANDBOX_URL=${options.sandboxUrl} did not answer GET /__sandbox/clock within ${options.startTimeoutMs / 1000} s (${why}): start it first (npm run sandbox)`,
  );
}

async function readSandboxClock(url: string): Promise<Date> {
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(readTimeoutMs) });
  const body = (await response.json().catch(() => null)) as { data?: { now?: unknown } } | null;
  const now = typeof body?.data?.now === 'string' ? new Date(body.data.now) : undefined;
  if (!response.ok || now === undefined || Number.isNaN(now.getTime())) {
    throw new Error(`GET ${url} answered HTTP ${response.status} without a clock reading`);
  }
  return now;
}
