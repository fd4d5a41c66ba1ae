import type { Clock } from '../clock.ts';
import type { CustomerLookupRequest } from '../providers/vtu/vtu-provider.ts';

// The names the customer look-ups found lately (lookups.ts), so that a purchase for the same meter,
// smartcard or betting account can say whose it is on its receipt (issue 26) without asking the
// provider again or waiting for it: a buy screen looks the number up just before the PIN. The name is
// always the provider's, never one a client sent.
//
// Held in this process's memory, for a while and a bounded number of them. A purchase whose look-up
// is not here (never made, made too long ago, or made through another process when several run)
// simply has no name from it; the provider's own answer may still give one (settlement.ts). A name
// is a nicety of the receipt: its absence never holds up or refuses a purchase.

/** How long a look-up names purchases for: long enough to pay, short enough for a name to change. */
export const verifiedNameFreshMs = 30 * 60_000;
/** Names kept at most; the oldest go first. */
export const verifiedNamesMax = 10_000;

export type VerifiedCustomers = {
  /** Keeps the name a look-up found. */
  remember(request: CustomerLookupRequest, name: string): void;
  /** The name a look-up of the same number found within verifiedNameFreshMs, if any. */
  nameOf(request: CustomerLookupRequest): string | undefined;
};

export function createVerifiedCustomers(clock: Clock, max = verifiedNamesMax): VerifiedCustomers {
  // A Map keeps its insertion order: re-inserting a name on each look-up keeps the oldest first.
  const names = new Map<string, { name: string; foundAtMs: number }>();
  return {
    remember(request, name) {
      const key = keyOf(request);
      names.delete(key);
      names.set(key, { name, foundAtMs: clock.now().getTime() });
      for (const oldest of names.keys()) {
        if (names.size <= max) break;
        names.delete(oldest);
      }
    },
    nameOf(request) {
      const key = keyOf(request);
      const found = names.get(key);
      if (found === undefined) return undefined;
      if (clock.now().getTime() - found.foundAtMs >= verifiedNameFreshMs) {
        names.delete(key);
        return undefined;
      }
      return found.name;
    },
  };
}

/** The number looked up, with what it was looked up at (the DisCo and meter type, the cable provider, the bookmaker). */
function keyOf(request: CustomerLookupRequest): string {
  switch (request.service) {
    case 'cable':
      return JSON.stringify([request.service, request.provider, request.iuc]);
    case 'electricity':
      return JSON.stringify([request.service, request.disco, request.meterType, request.meter]);
    case 'betting':
      return JSON.stringify([request.service, request.company, request.customerId]);
  }
}
