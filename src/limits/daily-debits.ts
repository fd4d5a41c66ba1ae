import { type Kysely, sql, type Transaction } from 'kysely';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { lagosDate } from '../lagos-time.ts';
import { formatNaira, koboToNaira } from '../money.ts';
import { limitsOfTier, type TierLimits, tierAdmitting, tighter } from './tier-limits.ts';

// The daily debit limit (API.md 17.2, decision 0044): what leaves a person on the Lagos day of
// acceptance (purchases, bulk orders, scheduled runs, transfers out) stays within the tighter of
// their tier's limit and their own. The day's sum is kept with the person (account_limits), not
// summed from history on every debit: a debit reads it once its wallet is locked, judges, and
// adds to it in the same transaction; a refund gives its room back.
//
// Lock rule: a person's account_limits row is read and written only while their wallet's ledger row
// is locked by the same transaction (after it, in the one lock order: user accounts, system
// accounts, then this row). Every debit takes that lock first, so two debits of one person are
// judged one after the other, in any process; and no transaction can hold this row while waiting
// for a wallet.

type Handle = Kysely<DB> | Transaction<DB>;

/** What the limit is judged on for one person, on one Lagos day. */
export type DayUse = {
  tier: number;
  /** What left the person today, kobo. */
  usedKobo: bigint;
  /** The person's own daily limit in force today, kobo; null when they set none. */
  personalKobo: bigint | null;
  /** A raise (or removal, null) of the personal limit waiting for a later day. */
  pending: { limitKobo: bigint | null; from: string } | null;
};

type LimitRow = {
  user_id: string;
  debit_day: string;
  debited: bigint;
  personal_limit: bigint | null;
  pending_limit: bigint | null;
  pending_from: string | null;
};

/** The day's use from the person's row (none: nothing used, no personal limit). */
export function dayUseOf(row: LimitRow | undefined, tier: number, today: string): DayUse {
  if (row === undefined) return { tier, usedKobo: 0n, personalKobo: null, pending: null };
  const pendingDue = row.pending_from !== null && row.pending_from <= today;
  return {
    tier,
    usedKobo: row.debit_day === today ? row.debited : 0n,
    personalKobo: pendingDue ? row.pending_limit : row.personal_limit,
    pending:
      pendingDue || row.pending_from === null
        ? null
        : { limitKobo: row.pending_limit, from: row.pending_from },
  };
}

/** The limit in force: the tighter of the tier's and the person's own; null is none. */
export const dailyLimitOf = (limits: TierLimits, use: DayUse): bigint | null =>
  tighter(limitsOfTier(limits, use.tier).dailyKobo, use.personalKobo);

/** Reads the rows of these people (under their wallet locks, when judging a debit). */
export async function limitRowsOf(db: Handle, userIds: readonly string[]): Promise<Map<string, LimitRow>> {
  if (userIds.length === 0) return new Map();
  const { rows } = await statement<LimitRow>('limits.rows-of')`
    select user_id, debit_day::text as debit_day, debited, personal_limit, pending_limit,
      pending_from::text as pending_from
    from account_limits where user_id = any(${userIds}::uuid[])`.execute(db);
  return new Map(rows.map((row) => [row.user_id, row]));
}

/**
 * A debit of `amountKobo` judged on the day's use: null admits it, else 403 LIMIT_EXCEEDED with
 * what remains today and, when the tier's limit is what refuses, the lowest tier that would admit it.
 */
export function judgeDebit(limits: TierLimits, use: DayUse, amountKobo: bigint): AppError | null {
  const limitKobo = dailyLimitOf(limits, use);
  if (limitKobo === null || use.usedKobo + amountKobo <= limitKobo) return null;
  const remainingKobo = limitKobo > use.usedKobo ? limitKobo - use.usedKobo : 0n;
  const tierLimitKobo = limitsOfTier(limits, use.tier).dailyKobo;
  const ownLimitBinds =
    use.personalKobo !== null && use.personalKobo === limitKobo && tierLimitKobo !== limitKobo;
  const upgradeTier = ownLimitBinds ? undefined : tierAdmitting(limits, use.tier, use.usedKobo + amountKobo);
  const whose = ownLimitBinds ? 'your own daily limit' : `the Tier ${use.tier} daily limit`;
  const lift =
    upgradeTier === undefined
      ? ''
      : `; Tier ${upgradeTier} lifts it to ${naira(limitsOfTier(limits, upgradeTier).dailyKobo)}`;
  return new AppError(
    'LIMIT_EXCEEDED',
    `${naira(remainingKobo)} is left today of ${whose} of ${naira(limitKobo)}${lift}`,
    {
      details: {
        limit: 'daily_debit',
        limitAmount: koboToNaira(limitKobo),
        remaining: koboToNaira(remainingKobo),
        ...(upgradeTier === undefined ? {} : { upgradeTier }),
      },
    },
  );
}

/** An amount of the refusal's message, through its digits (money.ts), never a float. */
const naira = (kobo: bigint | null) => (kobo === null ? 'no limit' : formatNaira(kobo));

/**
 * Adds accepted debits to their people's day (the Lagos day of `now`), starting the day again when
 * the row counts an earlier one. Relative, so a refund's give-back in another transaction is never lost.
 */
export async function countDebits(
  trx: Transaction<DB>,
  debits: ReadonlyArray<{ userId: string; amountKobo: bigint }>,
  now: Date,
): Promise<void> {
  const perUser = new Map<string, bigint>();
  for (const d of debits) perUser.set(d.userId, (perUser.get(d.userId) ?? 0n) + d.amountKobo);
  if (perUser.size === 0) return;
  await statement('limits.count-debits')`
    insert into account_limits (user_id, debit_day, debited, updated_at)
    select v.user_id, ${lagosDate(now)}::date, v.amount, ${now}::timestamptz
    from unnest(${[...perUser.keys()]}::uuid[], ${[...perUser.values()]}::bigint[]) as v(user_id, amount)
    on conflict (user_id) do update set
      debited = case when account_limits.debit_day = excluded.debit_day
        then account_limits.debited + excluded.debited else excluded.debited end,
      debit_day = excluded.debit_day,
      updated_at = excluded.updated_at`.execute(trx);
}

/**
 * A refund gives its room back to the day the debit was accepted on, if that day is still the one
 * counted (a refund the next day gives back nothing: that day's room is gone). Under the wallet
 * locks of the refund's posting.
 */
export async function giveBackRoom(
  trx: Transaction<DB>,
  refunds: ReadonlyArray<{ userId: string; amountKobo: bigint; acceptedAt: Date }>,
  now: Date,
): Promise<void> {
  if (refunds.length === 0) return;
  await sql`
    update account_limits as a
    set debited = greatest(a.debited - v.amount, 0), updated_at = ${now}::timestamptz
    from (
      select r.user_id, r.day, sum(r.amount)::bigint as amount
      from unnest(${refunds.map((r) => r.userId)}::uuid[], ${refunds.map((r) => lagosDate(r.acceptedAt))}::date[],
        ${refunds.map((r) => r.amountKobo)}::bigint[]) as r(user_id, day, amount)
      group by r.user_id, r.day
    ) as v
    where a.user_id = v.user_id and a.debit_day = v.day`.execute(trx);
}

/** What a debit judge needs: the limits, and each person's tier read in the caller's transaction. */
export type DailyLimitDeps = {
  limits: TierLimits;
  tiersAmong: (trx: Transaction<DB>, userIds: readonly string[]) => Promise<Map<string, number>>;
};

/**
 * The daily limit as a purchase rule (vtu's DebitRule: the six purchases, social services, bulk
 * orders and scheduled runs all go through it): loaded once the buyers' wallets are locked, each
 * purchase judged on the day's use plus those admitted before it, and what was accepted saved.
 */
export const dailyDebitRule = (deps: DailyLimitDeps) => ({
  name: 'daily-debit-limit',
  async load(trx: Transaction<DB>, buyerIds: string[], now: Date) {
    const today = lagosDate(now);
    const rows = await limitRowsOf(trx, buyerIds);
    const tiers = await deps.tiersAmong(trx, buyerIds);
    const uses = new Map(buyerIds.map((id) => [id, dayUseOf(rows.get(id), tiers.get(id) ?? 0, today)]));
    // What each group (an order refused whole) found used at its first line: its lines are judged
    // together, so a refusal says what remained before the order and which tier would take it all.
    const usedBeforeGroup = new Map<string, bigint>();
    return (purchase: { userId: string; amountKobo: bigint; group?: string }): AppError | null => {
      const use = uses.get(purchase.userId)!;
      let before = use.usedKobo;
      if (purchase.group !== undefined) {
        before = usedBeforeGroup.get(purchase.group) ?? use.usedKobo;
        usedBeforeGroup.set(purchase.group, before);
      }
      const ofGroupSoFar = use.usedKobo - before;
      const refusal = judgeDebit(
        deps.limits,
        { ...use, usedKobo: before },
        ofGroupSoFar + purchase.amountKobo,
      );
      if (refusal === null) use.usedKobo += purchase.amountKobo;
      return refusal;
    };
  },
  save: (trx: Transaction<DB>, accepted: Array<{ userId: string; amountKobo: bigint }>, now: Date) =>
    countDebits(trx, accepted, now),
});

/**
 * The daily limit as the admission of one debit's posting (a transfer out): prepared once the
 * posting locked the wallet, then, once the posting is accepted, `save` counts it.
 */
export function dailyDebitAdmission(
  deps: DailyLimitDeps,
  trx: Transaction<DB>,
  debit: { userId: string; amountKobo: bigint },
  now: Date,
) {
  let use: DayUse | undefined;
  return {
    async prepare() {
      const rows = await limitRowsOf(trx, [debit.userId]);
      const tiers = await deps.tiersAmong(trx, [debit.userId]);
      use = dayUseOf(rows.get(debit.userId), tiers.get(debit.userId) ?? 0, lagosDate(now));
    },
    admit: (): AppError | null => judgeDebit(deps.limits, use!, debit.amountKobo),
    save: () => countDebits(trx, [debit], now),
  };
}
