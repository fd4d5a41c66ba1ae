import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { lagosDate, lagosDayStartOn, nextLagosMidnight } from '../lagos-time.ts';
import { balancesOf, lockUserAccounts, userAccount } from '../ledger/accounts.ts';
import { koboToNaira } from '../money.ts';
import { type DayUse, dailyLimitOf, dayUseOf, limitRowsOf } from './daily-debits.ts';
import type { TiersAmong } from './held-balance.ts';
import type { accountLimitsView } from './schemas.ts';
import { limitsOfTier, nextTier, type TierLimits } from './tier-limits.ts';

// A person's limits as they read them (getAccountLimits), and their own daily limit
// (setPersonalDailyLimit): lowered at once, raised (or removed) from the next Lagos day, so that
// someone who lowered it to protect themselves cannot be talked into raising it for a payment now.

export type AccountLimitsDeps = { db: Kysely<DB>; limits: TierLimits; tiersAmong: TiersAmong };

export type AccountLimitsView = z.input<typeof accountLimitsView>;

const naira = (kobo: bigint | null) => (kobo === null ? null : koboToNaira(kobo));

function viewOf(deps: AccountLimitsDeps, use: DayUse, heldKobo: bigint, now: Date): AccountLimitsView {
  const limitKobo = dailyLimitOf(deps.limits, use);
  const next = nextTier(deps.limits, use.tier);
  return {
    tier: use.tier,
    dailyDebitLimit: naira(limitKobo),
    dailyDebitUsed: koboToNaira(use.usedKobo),
    dailyDebitRemaining:
      limitKobo === null ? null : koboToNaira(limitKobo > use.usedKobo ? limitKobo - use.usedKobo : 0n),
    maxBalance: naira(limitsOfTier(deps.limits, use.tier).balanceKobo),
    heldBalance: koboToNaira(heldKobo),
    dayResetsAt: nextLagosMidnight(now).toISOString(),
    personalDailyLimit: naira(use.personalKobo),
    ...(use.pending === null
      ? {}
      : {
          pendingPersonalDailyLimit: {
            amount: naira(use.pending.limitKobo),
            from: lagosDayStartOn(use.pending.from).toISOString(),
          },
        }),
    ...(next === undefined
      ? {}
      : {
          nextTier: {
            tier: next.tier,
            dailyDebitLimit: naira(next.limit.dailyKobo),
            maxBalance: naira(next.limit.balanceKobo),
          },
        }),
  };
}

/** The person's limits today, what they used and what is held. */
export async function accountLimitsOf(
  deps: AccountLimitsDeps,
  userId: string,
  now: Date,
): Promise<AccountLimitsView> {
  const held = userAccount('wallet_held', userId);
  const [rows, tiers, balances] = await Promise.all([
    limitRowsOf(deps.db, [userId]),
    deps.tiersAmong(deps.db, [userId]),
    balancesOf(deps.db, [held]),
  ]);
  const use = dayUseOf(rows.get(userId), tiers.get(userId) ?? 0, lagosDate(now));
  return viewOf(deps, use, balances.get(held) ?? 0n, now);
}

/**
 * Sets the person's own daily limit (kobo; null: none). Lower than the one in force: at once, and a
 * raise waiting is dropped. Higher, or none: from the next Lagos day. Under the wallet's lock, the
 * lock every debit judging the limit takes (daily-debits.ts).
 */
export async function setPersonalDailyLimit(
  deps: AccountLimitsDeps,
  userId: string,
  amountKobo: bigint | null,
  now: Date,
): Promise<AccountLimitsView> {
  await deps.db.transaction().execute(async (trx) => {
    const balances = await lockUserAccounts(trx, [userAccount('wallet', userId)]);
    if (balances.size === 0) throw new Error(`no wallet for user ${userId}`);
    const today = lagosDate(now);
    const use = dayUseOf((await limitRowsOf(trx, [userId])).get(userId), 0, today);
    const current = use.personalKobo;
    const lowers = amountKobo !== null && (current === null || amountKobo < current);
    const change = lowers
      ? { personal_limit: amountKobo, pending_limit: null, pending_from: null }
      : amountKobo === current
        ? { personal_limit: current, pending_limit: null, pending_from: null }
        : {
            personal_limit: current,
            pending_limit: amountKobo,
            pending_from: lagosDate(nextLagosMidnight(now)),
          };
    await trx
      .insertInto('account_limits')
      .values({ user_id: userId, debit_day: today, ...change, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...change, updated_at: now }))
      .execute();
  });
  return accountLimitsOf(deps, userId, now);
}
