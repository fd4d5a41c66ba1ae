import type { Session } from './client.ts';

// What the soak expects, computed from what the API answered and the sandbox's rules alone, never
// read back from the service: each wallet's balance, locked savings and check-in accrual; each
// purchase's end (the recipient's last digit: 1 and 3 fail, every other digit ends in success) and
// so whether it is refunded; every top-up credited once however many times its webhook came.

export type Expected = 'success' | 'failed';

export type ExpectedPurchase = {
  userId: string;
  id: string;
  reference: string | undefined;
  service: string;
  recipient: string;
  chargedKobo: bigint;
  /** The digit's rule; null when a provider fault was on while it was in the provider's hands. */
  expected: Expected | null;
  via: 'direct' | 'bulk' | 'schedule';
  /** performance.now() when the service accepted it (a fault that starts soon after may reach it). */
  acceptedAt: number;
};

export type Person = {
  session: Session;
  nin: string;
  /** Credits and debits other than purchases (top-ups, transfers, savings), in kobo. */
  baseKobo: bigint;
  lockedKobo: bigint;
  checkinKobo: bigint;
  /** Transfers to other people the service accepted, in kobo: what the daily debit limit counts of baseKobo. */
  transferredOutKobo: bigint;
  topups: number;
};

export type Unresolved = { what: string; retry: () => Promise<boolean> };

export type Model = {
  people: Person[];
  purchases: ExpectedPurchase[];
  /** Top-up references the soak paid, to be credited once each. */
  topups: Map<string, { userId: string; kobo: bigint; via: 'webhook' | 'checkout' }>;
  /** Operations that never got a definite answer during the run: retried after the quiet. */
  unresolved: Unresolved[];
  /** Votes per poll option that the service accepted. */
  votes: Map<string, number>;
  /** Who has a vote counted in `votes` (by phone): a second vote of theirs is refused. */
  voters: Set<string>;
  /** Scheduled purchases: one run each, at this price and recipient; expected as purchases are. */
  schedules: {
    userId: string;
    id: string;
    recipient: string;
    chargedKobo: bigint;
    expected: Expected | null;
    /**
     * The service skipped its one run, the wallet not covering it at that moment (other purchases of
     * the same person ran first): it charged nothing. Read back after the quiet (readScheduleOutcomes).
     */
    skipped?: boolean;
  }[];
  /** "operation → outcome" counts for the report. */
  counts: Map<string, number>;
  /** While a provider fault is on, purchases it may touch are decided by the provider. */
  providerFaultOn: { value: boolean };
};

export function newModel(): Model {
  return {
    people: [],
    purchases: [],
    topups: new Map(),
    unresolved: [],
    votes: new Map(),
    voters: new Set(),
    schedules: [],
    counts: new Map(),
    providerFaultOn: { value: false },
  };
}

export function count(model: Model, op: string, outcome: string): void {
  const key = `${op} → ${outcome}`;
  model.counts.set(key, (model.counts.get(key) ?? 0) + 1);
}

/** The sandbox's VTU rule (API.md section 8): `1` fails, `3` fails on requery, the rest succeed. */
export function outcomeOfDigit(recipient: string): Expected {
  const digit = recipient.at(-1);
  return digit === '1' || digit === '3' ? 'failed' : 'success';
}

/** Naira as the API gives it (≤ 2 decimals) to kobo, without floating-point drift. */
export function koboOf(naira: number): bigint {
  return BigInt(Math.round(naira * 100));
}

export function personOf(model: Model, userId: string): Person {
  const person = model.people.find((p) => p.session.userId === userId);
  if (person === undefined) throw new Error(`no person ${userId} in the model`);
  return person;
}

/**
 * The balance a person's wallet must hold: the base, less every purchase charged, plus the refund
 * of each purchase that failed. A purchase the digit does not decide (a provider fault) is taken
 * as it ended (`actual`, by purchase id, and by `to:<recipient>` for a schedule's run, whose id
 * the soak never hears): the check is then that it was refunded exactly if it failed.
 */
export function expectedBalanceKobo(model: Model, person: Person, actual: Map<string, string>): bigint {
  let balance = person.baseKobo;
  for (const purchase of model.purchases) {
    if (purchase.userId !== person.session.userId) continue;
    const end = purchase.expected ?? actual.get(purchase.id);
    balance -= purchase.chargedKobo;
    if (end === 'failed') balance += purchase.chargedKobo;
  }
  for (const schedule of model.schedules) {
    if (schedule.userId !== person.session.userId || schedule.skipped === true) continue;
    balance -= schedule.chargedKobo;
    if ((schedule.expected ?? actual.get(`to:${schedule.recipient}`)) === 'failed')
      balance += schedule.chargedKobo;
  }
  return balance;
}
