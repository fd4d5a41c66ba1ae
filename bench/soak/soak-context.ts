import type { Session, SoakClient } from './client.ts';
import type { Model } from './model.ts';

// What every driver of the soak shares: the client, the model it keeps, where webhooks go (the
// balancer in front of the API processes), the PIN every person set, and when to stop.

export type Soak = {
  client: SoakClient;
  model: Model;
  /** Where the payment provider's webhooks are sent: the balancer (or the one API process). */
  serviceUrl: string;
  admin: Session;
  pin: string;
  /** Set when the driving time is over: drivers finish the step in hand and return. */
  stopped: { value: boolean };
  /** What driver steps threw: each one fails the run. */
  errors: string[];
  /** Distinct webhook event ids across the run. */
  sequence: { next: number };
};

export const PIN = '2580';

export function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

export function between(low: number, high: number): number {
  return low + Math.floor(Math.random() * (high - low + 1));
}

/**
 * Runs the driver's step again and again until the soak says stop. A step that throws (a setup read
 * that failed past every retry) is recorded, fails the run's checks, and the driver goes on.
 */
export async function untilStopped(soak: Soak, step: () => Promise<void>): Promise<void> {
  while (!soak.stopped.value) {
    try {
      await step();
    } catch (error) {
      soak.errors.push((error as Error).message.slice(0, 300));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
