// The purchases a process sends right after accepting them (src/vtu/purchases.ts), bounded. Accepting
// faster than purchases can be sent only lengthens every purchase's time in processing (on PGlite's
// one connection, each send's claim and settlement queue behind the accepts): under load a new
// purchase waits for a place before its transaction, so the wait is the client's, on its request,
// and a purchase accepted is sent at once. One per context.

export type InlineSends = {
  /** Resolves when a place is this caller's; give it back with release(). */
  take(): Promise<void>;
  release(): void;
  /** Purchases checked and waiting for a place, not debited yet (what the bound holds back now). */
  waiting(): number;
  /** Runs a send, tracked until it ends; its place is given back then. */
  track(id: string, send: Promise<void>): void;
  /** Resolves when this process's send of the purchase (if any) has ended. */
  ended(id: string): Promise<void>;
  /** Resolves when every send under way has ended (graceful shutdown). */
  allEnded(): Promise<void>;
};

export function createInlineSends(max: number): InlineSends {
  let inUse = 0;
  const waiting: Array<() => void> = [];
  const running = new Map<string, Promise<void>>();
  const sends: InlineSends = {
    async take() {
      if (inUse < max) {
        inUse += 1;
        return;
      }
      // The place is handed over by release, never counted twice.
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next !== undefined) next();
      else inUse -= 1;
    },
    waiting: () => waiting.length,
    track(id, send) {
      running.set(
        id,
        send.finally(() => {
          running.delete(id);
          sends.release();
        }),
      );
    },
    async ended(id) {
      await running.get(id);
    },
    async allEnded() {
      await Promise.allSettled([...running.values()]);
    },
  };
  return sends;
}
