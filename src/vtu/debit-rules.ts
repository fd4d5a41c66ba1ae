import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { type AppError, accountFrozen } from '../errors.ts';

// Purchase rules that need state at debit time: a daily limit, a velocity limit, anything that
// depends on what the same user bought before. This file is the one place for them. A rule is
// decided inside the acceptance's transaction, after the buyers' wallets are locked and in arrival
// order together with the balances (decidePostings' `admission`), so two purchases of the same user
// racing in two batches or two processes are decided one after the other, and a purchase the rule
// refuses is refused like one the wallet does not cover: nothing debited, nothing recorded.
//
// Recipe (CONTRIBUTING.md, "Add a purchase rule"): write a DebitRule whose `load` reads, with one
// statement for the whole batch, what the rule decides on for these buyers, and returns a check
// that refuses a purchase with an AppError (a code of API.md section 2, declared in the purchase
// operations' `errors`) or admits it and counts it, so that the next purchase of the same batch
// sees it. Add it to the rules the vtu module is given (`debitRules`, which src/modules.ts passes to
// createVtuModule). test/vtu/debit-rules.test.ts is the template of its tests.

/** What a rule sees of one purchase being accepted. */
export type DebitCandidate = {
  userId: string;
  service: string;
  amountKobo: bigint;
  /**
   * Set on the lines of one order accepted or refused whole (a bulk order, a scheduled run's group):
   * a rule that sums may judge the order's lines together and answer for the whole order.
   */
  group?: string;
};

/** Decides one purchase, in arrival order: an AppError refuses it; null admits it (and counts it). */
export type DebitCheck = (purchase: DebitCandidate) => AppError | null;

export type DebitRule = {
  name: string;
  /** Reads the rule's state for the batch's buyers, under their wallet locks. */
  load(trx: Transaction<DB>, buyerIds: string[], now: Date): Promise<DebitCheck>;
  /**
   * A rule that keeps its own state (a day's sum) writes what it counted of the purchases finally
   * accepted, in the same transaction, still under the wallet locks, before the debits are written.
   */
  save?(trx: Transaction<DB>, accepted: DebitCandidate[], now: Date): Promise<void>;
};

/** The admission of a batch (decidePostings' `admission`), and the write of what its rules counted. */
export type DebitAdmission = {
  prepare(): Promise<void>;
  admit(index: number): AppError | null;
  /** Saves, for every rule that keeps state, the candidates decidePostings accepted (`accepted[i]`). */
  save(accepted: readonly boolean[]): Promise<void>;
};

/**
 * The admission of a batch of purchases (decidePostings' `admission`): every rule's state loaded
 * once the wallets are locked, then every rule asked about each purchase in order.
 */
export function admissionOf(
  rules: readonly DebitRule[],
  trx: Transaction<DB>,
  candidates: DebitCandidate[],
  now: Date,
): DebitAdmission | undefined {
  if (rules.length === 0) return undefined;
  let checks: DebitCheck[] = [];
  return {
    async prepare() {
      const buyers = [...new Set(candidates.map((c) => c.userId))];
      checks = [];
      // One after the other: on PGlite the transaction's statements run one at a time anyway.
      for (const rule of rules) checks.push(await rule.load(trx, buyers, now));
    },
    admit(index) {
      for (const check of checks) {
        const refusal = check(candidates[index]!);
        if (refusal !== null) return refusal;
      }
      return null;
    },
    async save(accepted) {
      const admitted = candidates.filter((_, i) => accepted[i] === true);
      for (const rule of rules) if (rule.save !== undefined) await rule.save(trx, admitted, now);
    },
  };
}

/**
 * The rule the service always runs (decision 0040): a frozen account (API.md 17.4) pays for nothing,
 * 403 ACCOUNT_FROZEN. `frozenAmong` is auth's, reading the buyers' rows FOR SHARE under the wallets'
 * locks, so a freeze waits for the purchases that read the account unfrozen and is seen by every
 * purchase decided after it.
 */
export const accountNotFrozen = (
  frozenAmong: (trx: Transaction<DB>, userIds: readonly string[]) => Promise<Set<string>>,
): DebitRule => ({
  name: 'account-not-frozen',
  async load(trx, buyerIds) {
    const frozen = await frozenAmong(trx, buyerIds);
    return (purchase) => (frozen.has(purchase.userId) ? accountFrozen() : null);
  },
});
