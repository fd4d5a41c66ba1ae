import type { ApiError } from '../api/errors.ts';
// The generated types themselves, not the client (which needs a browser's globals): the words are
// also run and typechecked by Node's tests.
import type { operations } from '../api/schema.d.ts';
import { formatDateTime, formatNairaNumber } from '../format.ts';

// The account limits of API.md 17.2 in words: a payment over the day's room, said before the PIN is
// asked (from getAccountLimits) or after the service refused it (403 LIMIT_EXCEEDED); a balance held
// over the tier's maximum, and what releases it; and what a change of the person's own limit does.
// Plain functions, so that the words are tested without a browser (test/web/account-limits.test.ts).

export type Limits = operations['getAccountLimits']['responses'][200]['content']['application/json']['data'];

/** A debit the day's limit does not leave room for. */
export type OverLimit = {
  /** What is left of the day's limit, in naira. */
  remaining: number;
  /** The limit that stops it, in naira, when known. */
  limitAmount: number | null;
  /** The limit is the one the person set below their tier's: only they can raise it (from tomorrow). */
  own: boolean;
  /** The tier that would lift it, and its daily limit when known (null: no limit, or not known). */
  upgrade: { tier: number; dailyDebitLimit: number | null } | null;
  /** When the day's limit starts again. */
  resetsAt: string | null;
};

/**
 * Whether the person's own limit is the one that binds: the view's daily limit is already the tighter
 * of the tier's and theirs, so theirs binds when it is that limit (a higher tier would not lift it).
 */
/** Whether the person's own limit is the one in force (a tier without any limit has none to bind). */
export const ownLimitBinds = (limits: Limits): boolean =>
  limits.personalDailyLimit !== null && limits.personalDailyLimit === limits.dailyDebitLimit;

/** A debit of `amount` naira today, judged before the PIN: null when the day's room covers it. */
export function overDailyLimit(limits: Limits, amount: number): OverLimit | null {
  if (limits.dailyDebitRemaining === null || amount <= limits.dailyDebitRemaining) return null;
  const own = ownLimitBinds(limits);
  return {
    remaining: limits.dailyDebitRemaining,
    limitAmount: limits.dailyDebitLimit,
    own,
    upgrade:
      own || limits.nextTier === undefined
        ? null
        : { tier: limits.nextTier.tier, dailyDebitLimit: limits.nextTier.dailyDebitLimit },
    resetsAt: limits.dayResetsAt,
  };
}

const numberOr = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/** The service's 403 LIMIT_EXCEEDED as an OverLimit (null for any other answer), with the limits read. */
export function overLimitOfRefusal(error: ApiError | null, limits?: Limits): OverLimit | null {
  if (error?.code !== 'LIMIT_EXCEEDED') return null;
  const details = error.details ?? {};
  const limitAmount = numberOr(details.limitAmount);
  const upgradeTier = numberOr(details.upgradeTier);
  return {
    remaining: numberOr(details.remaining) ?? 0,
    limitAmount,
    own: upgradeTier === null && limits !== undefined && ownLimitBinds(limits),
    upgrade:
      upgradeTier === null
        ? null
        : {
            tier: upgradeTier,
            dailyDebitLimit: limits?.nextTier?.tier === upgradeTier ? limits.nextTier.dailyDebitLimit : null,
          },
    resetsAt: limits?.dayResetsAt ?? null,
  };
}

/** The Lagos time a limit starts again, as people read it. */
const lagos = (iso: string) => `${formatDateTime(iso)} (Lagos time)`;

/**
 * What to tell the person about a debit over the day's limit: first the limit and what is left
 * ("₦5,000.00 left today; Tier 2 lifts it to ₦200,000.00."), then when it starts again.
 */
export function describeOverLimit(over: OverLimit, refused: boolean): string[] {
  const left = over.remaining > 0 ? `${formatNairaNumber(over.remaining)} left today` : 'nothing left today';
  const of = over.limitAmount === null ? '' : ` of ${formatNairaNumber(over.limitAmount)}`;
  const lift =
    over.upgrade === null
      ? ''
      : over.upgrade.dailyDebitLimit === null
        ? `; Tier ${over.upgrade.tier} lifts it`
        : `; Tier ${over.upgrade.tier} lifts it to ${formatNairaNumber(over.upgrade.dailyDebitLimit)}`;
  const first = over.own
    ? `This is over the daily limit you set${of}: ${left}. A higher limit you set starts the next day.`
    : `This is over your daily limit${of}: ${left}${lift}.`;
  const lines = [refused ? `${first} Nothing was charged.` : first];
  if (over.resetsAt !== null) lines.push(`Your daily limit starts again on ${lagos(over.resetsAt)}.`);
  return lines;
}

/** A balance held over the tier's maximum, and what releases it (null when nothing is held). */
export function describeHeld(
  heldBalance: number,
  limits: Limits | undefined,
): { held: string; release: string; verifyTier: number | null } | null {
  if (heldBalance <= 0) return null;
  const maximum =
    limits?.maxBalance === null || limits?.maxBalance === undefined
      ? ''
      : `: over your Tier ${limits.tier} maximum of ${formatNairaNumber(limits.maxBalance)}`;
  const next = limits?.nextTier;
  const release =
    next === undefined
      ? 'It cannot be spent yet. It moves into your balance by itself once your balance falls far enough below the maximum.'
      : `It cannot be spent yet. It moves into your balance by itself when you complete Tier ${next.tier} verification (${
          next.maxBalance === null ? 'no maximum' : `a maximum of ${formatNairaNumber(next.maxBalance)}`
        }), or once your balance falls far enough below the maximum.`;
  return {
    held: `${formatNairaNumber(heldBalance)} held${maximum}.`,
    release,
    verifyTier: next?.tier ?? null,
  };
}

/**
 * What setting the person's own daily limit to `amount` (null: none, the tier's) does: lowering
 * takes effect at once; raising it, or removing it, from the next Lagos day. Null when it changes
 * nothing; a refusal when it would not be below the tier's limit, which is what applies without one.
 */
export function describeLimitChange(
  limits: Limits,
  amount: number | null,
): { raise: boolean; words: string } | { refusal: string } | null {
  const own = limits.personalDailyLimit;
  const now = limits.dailyDebitLimit;
  const pending = limits.pendingPersonalDailyLimit;
  if (amount === null) {
    if (own === null && (pending === undefined || pending.amount === null)) return null;
    return {
      raise: true,
      words: `From tomorrow your tier’s limit applies again. Until then your limit stays ${shownLimit(now)}.`,
    };
  }
  if (own === null && now !== null && amount >= now)
    return {
      refusal: `Your tier’s limit is ${formatNairaNumber(now)} a day: type a lower amount to set a limit of your own.`,
    };
  if (own === null || amount < own)
    return { raise: false, words: `Your daily limit becomes ${formatNairaNumber(amount)} now.` };
  if (amount === own && pending === undefined) return null;
  return {
    raise: true,
    words: `From tomorrow your daily limit is ${formatNairaNumber(amount)}. Until then it stays ${shownLimit(now)}.`,
  };
}

/** A limit in words: naira, or none. */
const shownLimit = (limit: number | null) => (limit === null ? 'no limit' : formatNairaNumber(limit));

/** A raise of the person's own limit waiting for the next Lagos day, in words (null when none waits). */
export function describePendingLimit(limits: Limits): string | null {
  const pending = limits.pendingPersonalDailyLimit;
  if (pending === undefined) return null;
  return pending.amount === null
    ? `From ${lagos(pending.from)} your tier’s limit applies again.`
    : `From ${lagos(pending.from)} your daily limit is ${formatNairaNumber(pending.amount)}.`;
}

/**
 * Before a funding: the part of `amount` that would land in the held balance, over the tier's
 * maximum (nothing is refused or lost: it moves in when the tier rises). Null when it all fits.
 */
export function describeFundingHeld(limits: Limits, balance: number, amount: number): string | null {
  if (limits.maxBalance === null) return null;
  const room = Math.max(0, limits.maxBalance - balance);
  // Naira with at most 2 decimals: the difference is taken in kobo, so no float is shown.
  const heldKobo = Math.round(amount * 100) - Math.round(room * 100);
  if (heldKobo <= 0) return null;
  const next = limits.nextTier;
  return `${formatNairaNumber(heldKobo / 100)} of this will be held, not spendable: over your Tier ${limits.tier} maximum balance of ${formatNairaNumber(limits.maxBalance)}.${
    next === undefined ? '' : ` It moves into your balance when you complete Tier ${next.tier} verification.`
  }`;
}
