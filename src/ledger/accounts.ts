import assert from 'node:assert/strict';
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

/**
 * The hot system accounts (docs/scaling.md section 2, decision 0050): nearly every purchase or top-up
 * writes one, so each is kept in K rows (LEDGER_SHARDS), `<code>` (shard 0, the account's first row
 * and its history) and `<code>#1` … `<code>#K-1`, and a transaction posts to one of them. Every shard
 * is an account of its own to the ledger check; what the account holds is the sum of its shards,
 * and a single shard may be below zero (accepted on one, settled on another).
 */
const shardedSystemAccounts: readonly string[] = [
  systemAccounts.collectionsPool,
  systemAccounts.vtuInFlight,
  systemAccounts.revenueMarkup,
];
/** The most shards an account may be kept in (LEDGER_SHARDS at most): readers look this far. */
export const ledgerShardsMax = 64;
const shardMark = '#';

/** True for a hot system account's logical code, whose postings are spread over its shards. */
export const isShardedAccount = (code: string): boolean =>
  !code.includes(shardMark) &&
  (shardedSystemAccounts.includes(code) || code.startsWith(providerFloatAccount('')));
/** The code of one shard of an account: shard 0 is the code itself, as is any account not sharded. */
export const shardAccount = (code: string, shard: number): string =>
  shard === 0 || !isShardedAccount(code) ? code : `${code}${shardMark}${shard}`;
/** The account a code belongs to: a shard's code without its `#n`, any other code as it is. */
export const logicalAccount = (code: string): string => {
  const mark = code.indexOf(shardMark);
  return mark === -1 ? code : code.slice(0, mark);
};
/** Every code an account may be kept under: all its possible shards for a sharded one, else itself. */
export const accountShardCodes = (code: string): string[] =>
  isShardedAccount(code)
    ? Array.from({ length: ledgerShardsMax }, (_, shard) => shardAccount(code, shard))
    : [code];

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
 * What system accounts hold, by logical code: the sum of each one's shards (an account not sharded is
 * its one row). Read this, never a shard's row, wherever a system balance is shown or decided on.
 */
export async function systemBalances(db: Handle, codes: readonly string[]): Promise<Map<string, bigint>> {
  const logical = [...new Set(codes.map(logicalAccount))];
  const sums = new Map(logical.map((code): [string, bigint] => [code, 0n]));
  if (logical.length === 0) return sums;
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['code', 'balance'])
    .where('code', 'in', logical.flatMap(accountShardCodes))
    .where('kind', '=', 'system')
    .execute();
  for (const row of rows) {
    const code = logicalAccount(row.code);
    sums.set(code, (sums.get(code) ?? 0n) + row.balance);
  }
  return sums;
}

/** What one system account holds: the sum of its shards. */
export async function systemBalance(db: Handle, code: string): Promise<bigint> {
  return (await systemBalances(db, [code])).get(logicalAccount(code)) ?? 0n;
}

/**
 * Opens shards 1 … shards-1 of every hot system account that exists (the migrations open them, the
 * provider floats among them), so that a posting never names a shard that is missing. Run at every
 * start-up, since LEDGER_SHARDS may have grown since the migration opened 8: idempotent, and safe for
 * processes starting together. Lowering LEDGER_SHARDS leaves the higher shards as they are: readers
 * sum every shard there is, and nothing posts to them any more.
 */
export async function openLedgerShards(db: Handle, shards: number, now: Date): Promise<void> {
  assert.ok(Number.isInteger(shards) && shards >= 1, 'an account is kept in one shard at least');
  assert.ok(shards <= ledgerShardsMax, 'readers sum the shards up to ledgerShardsMax only');
  if (shards === 1) return;
  const existing = await db
    .selectFrom('ledger_accounts')
    .select('code')
    .where('kind', '=', 'system')
    .where((eb) =>
      eb.or([
        eb('code', 'in', shardedSystemAccounts),
        eb(sql`left(code, ${providerFloatAccount('').length})`, '=', providerFloatAccount('')),
      ]),
    )
    .execute();
  const codes = existing.map((row) => row.code).filter(isShardedAccount);
  const opened = codes.flatMap((code) =>
    Array.from({ length: shards - 1 }, (_, i) => ({
      code: shardAccount(code, i + 1),
      kind: 'system' as const,
      created_at: now,
    })),
  );
  if (opened.length === 0) return;
  await db
    .insertInto('ledger_accounts')
    .values(opened)
    .onConflict((oc) => oc.column('code').doNothing())
    .execute();
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
