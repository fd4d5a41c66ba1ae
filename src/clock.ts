// One clock for the whole service. Every expiry, maturity and "today" reads it, so the sandbox can
// move time forward for everything at once (API.md section 12).

export type Clock = {
  now(): Date;
};

export const systemClock: Clock = { now: () => new Date() };

export type SandboxClock = Clock & {
  /** Moves the clock forward; it never goes backwards. */
  advance(seconds: number): Date;
};

export function createSandboxClock(base: Clock = systemClock): SandboxClock {
  let offsetMs = 0;
  return {
    now: () => new Date(base.now().getTime() + offsetMs),
    advance(seconds) {
      if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError('the clock only moves forward');
      offsetMs += Math.round(seconds * 1000);
      return new Date(base.now().getTime() + offsetMs);
    },
  };
}

/**
 * A service process's clock when the sandbox runs as its own process (SANDBOX_URL): the sandbox owns
 * the offset, and this clock follows the readings of it it is given (src/providers/sandbox/clock-link.ts).
 * now() stays synchronous: it adds the last offset learnt to the base clock.
 */
export type FollowingClock = Clock & {
  /**
   * Takes a reading of the sandbox clock: `sandboxNow` as the sandbox said it, `readAt` the base
   * clock's time the reading stands for (the middle of the request). It never moves this clock back:
   * a reading delayed on the wire says less than the sandbox already did.
   */
  follow(sandboxNow: Date, readAt?: Date): void;
};

export function createFollowingClock(base: Clock = systemClock): FollowingClock {
  let offsetMs = 0;
  return {
    now: () => new Date(base.now().getTime() + offsetMs),
    follow(sandboxNow, readAt = base.now()) {
      offsetMs = Math.max(offsetMs, sandboxNow.getTime() - readAt.getTime());
    },
  };
}
