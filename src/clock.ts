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
