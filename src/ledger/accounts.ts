import { type Kysely, sql, type Transaction } from 'kysely';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';

// Account codes. User accounts are `<kind>:<userId>`; system accounts have fixed codes, opened by
// the migrations, the per-provider float accounts (`provider_float:<provider>`) among them.

// `wallet_held` is the part of credits over the tier's maximum balance (API.md 17.2, decision 0045):
// the person's, not spendable, moved into the wallet by the limits module. Its code sorts after
// `wallet:<id>` ('_' > ':'), so the one lock order takes a person's wallet before their held balance.
export const userAccountKinds = [
  'wallet',
  'savings',
  'bonus_locked',
  'checkin_accrued',
  'wallet_held',
] as const;
export type UserAccountKind = (typeof userAccountKinds)[number];

export const systemAccounts = {
  collectionsPool: 'collections_pool',
  vtuInFlight: 'vtu_in_flight',
  revenueMarkup: 'revenue_markup',
  revenuePenalty: 'revenue_penalty',
  expenseRewards: 'expense_rewards',
  providerSettlement: 'provider_settlement',
  // Airtime-to-cash payouts (migration 2026-11-28T0900): below zero by what was paid out.
  airtimeCashPayouts: 'airtime_cash_payouts',
  // Dispute refunds (migration 2026-12-02T1100): below zero by what operators gave back.
  expenseDisputes: 'expense_disputes',
  // Operators' corrections, four eyes (migration 2026-12-08T1100): below zero by what the credits
  // gave more than the debits took back.
  adjustments: 'adjustments',
} as const;

export const userAccount = (kind: UserAccountKind, userId: string): string => `${kind}:${userId}`;
/** True for a user's account code (`<kind>:<userId>`), false for a system account's. */
export const isUserAccount = (code: string): boolean =>
  userAccountKinds.some((kind) => code.startsWith(`${kind}:`));
/**
 * Accounts that only ever grow: a user's locked referral bonus is never spendable and never
 * withdrawable (SPEC.md item 7), so no posting may take from it (postings.ts refuses one, and a
 * trigger refuses it in the database).
 */
export const isCreditOnlyAccount = (code: string): boolean => code.startsWith('bonus_locked:');
export const providerFloatAccount = (provider: string): string => `provider_float:${provider}`;

type Handle = Kysely<DB> | Transaction<DB>;

/** Opens the accounts every user has. Safe to call twice. */
export async function openUserAccounts(db: Handle, userId: string, now: Date): Promise<void> {
  await db
    .insertInto('ledger_accounts')
    .values(
      userAccountKinds.map((kind) => ({
        code: userAccount(kind, userId),
        kind: 'user' as const,
        user_id: userId,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.column('code').doNothing())
    .execute();
}

export async function balancesOf(db: Handle, codes: string[]): Promise<Map<string, bigint>> {
  if (codes.length === 0) return new Map();
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['code', 'balance'])
    .where('code', 'in', codes)
    .execute();
  return new Map(rows.map((r) => [r.code, r.balance]));
}

/**
 * The balance of one user account, locked until the caller's transaction ends: for a movement of
 * "all of it" (withdrawCheckin), whose amount must be read under the lock its posting then takes.
 * Lock it only before the posting, and only a user account, so that the one lock order holds.
 */
export async function lockedUserBalance(trx: Transaction<DB>, code: string): Promise<bigint> {
  const row = await trx
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('code', '=', code)
    .where('kind', '=', 'user')
    .forUpdate()
    .executeTakeFirst();
  return row?.balance ?? 0n;
}

/** The user's balances in kobo; accounts not yet opened read as zero. */
export async function userBalances(db: Handle, userId: string): Promise<Record<UserAccountKind, bigint>> {
  const balances = await balancesOf(
    db,
    userAccountKinds.map((kind) => userAccount(kind, userId)),
  );
  const read = (kind: UserAccountKind) => balances.get(userAccount(kind, userId)) ?? 0n;
  return {
    wallet: read('wallet'),
    savings: read('savings'),
    bonus_locked: read('bonus_locked'),
    checkin_accrued: read('checkin_accrued'),
    wallet_held: read('wallet_held'),
  };
}

/**
 * Locks these user accounts until the caller's transaction ends, in the one lock order (by code),
 * and reads their balances: one statement. For a movement whose amounts are decided on the balances
 * (a credit split at the maximum balance): lock first, decide, then post, whose own locks on the same
 * rows are then already held. Lock only user accounts, and only before the posting.
 */
export async function lockUserAccounts(
  trx: Transaction<DB>,
  codes: readonly string[],
): Promise<Map<string, bigint>> {
  if (codes.length === 0) return new Map();
  const { rows } = await statement<{ code: string; balance: bigint }>('ledger.lock-user-accounts')`
    select code, balance from ledger_accounts
    where code = any(${[...new Set(codes)]}::text[]) and kind = 'user'
    order by code collate "C" for update`.execute(trx);
  return new Map(rows.map((row) => [row.code, row.balance]));
}

/**
 * The people whose held balance (the part of credits over their maximum, API.md 17.2) is above
 * zero, at most `max` of them, in account order after `afterUserId`'s: what the limits' release
 * sweep looks at, page by page. Read through the partial index of migration 2026-12-09T0900, whose
 * predicate this repeats word for word, as literals, so that the planner can prove it.
 */
export async function peopleWithHeldBalance(
  db: Handle,
  max: number,
  afterUserId?: string,
): Promise<string[]> {
  let query = db
    .selectFrom('ledger_accounts')
    .select('user_id')
    .where(sql<boolean>`code like 'wallet_held:%' and balance > 0`);
  if (afterUserId !== undefined) query = query.where('code', '>', userAccount('wallet_held', afterUserId));
  const rows = await query.orderBy('code').limit(max).execute();
  return rows.flatMap((row) => (row.user_id === null ? [] : [row.user_id]));
}
