import { createHash } from 'node:crypto';
import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { statement } from '../db/prepared.ts';
import type { DB, UsersTable } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { openUserAccounts } from '../ledger/accounts.ts';
import type { Role } from '../operation.ts';
import { newReferralCode } from './secrets.ts';

export type UserRow = Selectable<UsersTable>;

export type UserView = {
  id: string;
  phone: string;
  email: string | null;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
  /** Tier 2 verified the names: they are the ones on the NIN record and no longer change. */
  nameVerified: boolean;
  kycTier: number;
  hasPin: boolean;
  referralCode: string;
  roles: Role[];
  /** The price level whose markups the user pays (API.md section 16); null: the default prices. */
  priceLevel: string | null;
  /** An operator froze the account: nothing can be paid from it (API.md 17.4). */
  frozen: boolean;
  /** The person switched the USSD channel on (API.md 17.6). */
  ussdEnabled: boolean;
};

export const rolesOf = (phone: string, adminPhones: ReadonlySet<string>): Role[] =>
  adminPhones.has(phone) ? ['user', 'admin'] : ['user'];

export function toUserView(user: UserRow, adminPhones: ReadonlySet<string>): UserView {
  return {
    id: user.id,
    phone: user.phone,
    email: user.email,
    emailVerified: user.email !== null && user.email_verified_at !== null,
    firstName: user.first_name,
    lastName: user.last_name,
    nameVerified: user.name_verified_at !== null,
    kycTier: user.kyc_tier,
    hasPin: user.pin_hash !== null,
    referralCode: user.referral_code,
    roles: rolesOf(user.phone, adminPhones),
    priceLevel: user.price_level,
    frozen: user.frozen_at !== null,
    ussdEnabled: user.ussd_enabled,
  };
}

export async function findUserById(db: Kysely<DB>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user with this phone (E.164), if any. */
export async function findUserByPhone(db: Kysely<DB>, phone: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('phone', '=', phone).executeTakeFirst();
}

const REFERRAL_CODE_ATTEMPTS_MAX = 5;

/**
 * Returns the user with this phone, creating it (with its ledger accounts) on first sign-in, in the
 * caller's transaction. A referral code counts only on first sign-in: there it must belong to a user
 * (any case), else 400 VALIDATION_ERROR on `referralCode` and nobody is created; on a later sign-in
 * it changes nothing.
 */
export async function findOrCreateUser(
  trx: Transaction<DB>,
  phone: string,
  referralCode: string | undefined,
  now: Date,
): Promise<{ user: UserRow; created: boolean }> {
  const existing = await trx.selectFrom('users').selectAll().where('phone', '=', phone).executeTakeFirst();
  if (existing !== undefined) return { user: existing, created: false };

  let referredBy: string | null = null;
  if (referralCode !== undefined) {
    const referrer = await trx
      .selectFrom('users')
      .select('referral_code')
      .where('referral_code', '=', referralCode.toUpperCase())
      .executeTakeFirst();
    if (referrer === undefined) {
      const message = 'no user has this referral code';
      throw new AppError('VALIDATION_ERROR', message, {
        details: { issues: [{ path: ['data', 'referralCode'], message }] },
      });
    }
    referredBy = referrer.referral_code;
  }
  for (let attempt = 1; ; attempt++) {
    const inserted = await trx
      .insertInto('users')
      .values({
        id: newId(),
        phone,
        email: null,
        first_name: null,
        last_name: null,
        referral_code: newReferralCode(),
        referred_by_code: referredBy,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted !== undefined) {
      await openUserAccounts(trx, inserted.id, now);
      return { user: inserted, created: true };
    }
    // Either the phone signed up concurrently (return that user) or the referral code collided.
    const raced = await trx.selectFrom('users').selectAll().where('phone', '=', phone).executeTakeFirst();
    if (raced !== undefined) return { user: raced, created: false };
    if (attempt >= REFERRAL_CODE_ATTEMPTS_MAX) throw new Error('could not draw a unique referral code');
  }
}

/**
 * Changes the profile's names; once Tier 2 verified them (name_verified_at), 409 CONFLICT and
 * nothing changes. The condition is part of the UPDATE: one racing the approval's transaction waits
 * for its lock on the row and is then decided on the row as the approval left it. Answers undefined
 * for an unknown user.
 */
export async function setProfileNames(
  db: Kysely<DB>,
  userId: string,
  names: { firstName?: string | undefined; lastName?: string | undefined },
  now: Date,
): Promise<UserRow | undefined> {
  const renaming = names.firstName !== undefined || names.lastName !== undefined;
  let update = db
    .updateTable('users')
    .set({
      ...(names.firstName !== undefined ? { first_name: names.firstName } : {}),
      ...(names.lastName !== undefined ? { last_name: names.lastName } : {}),
      updated_at: now,
    })
    .where('id', '=', userId);
  if (renaming) update = update.where('name_verified_at', 'is', null);
  const user = await update.returningAll().executeTakeFirst();
  if (user !== undefined || !renaming) return user;
  if ((await findUserById(db, userId)) === undefined) return undefined;
  throw new AppError(
    'CONFLICT',
    'your name was verified with your NIN (KYC tier 2) and can no longer be changed; your email can',
  );
}

/**
 * Makes these the profile's names, verified: called by the KYC domain in the transaction that
 * approves Tier 2, with the names that matched the NIN record. They replace whatever the profile
 * says by then (a rename made while the provider was being asked was never verified).
 */
export async function setVerifiedName(
  trx: Transaction<DB>,
  userId: string,
  name: { firstName: string; lastName: string },
  now: Date,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ first_name: name.firstName, last_name: name.lastName, name_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

/** The highest KYC tier the user has been approved for (0 when none). */
export async function kycTierOf(db: Kysely<DB>, userId: string): Promise<number> {
  const row = await db.selectFrom('users').select('kyc_tier').where('id', '=', userId).executeTakeFirst();
  return row?.kyc_tier ?? 0;
}

/** Records an approved tier; called by the KYC domain inside its decision's transaction. */
export async function setKycTier(
  trx: Transaction<DB>,
  userId: string,
  tier: number,
  now: Date,
): Promise<void> {
  await trx.updateTable('users').set({ kyc_tier: tier, updated_at: now }).where('id', '=', userId).execute();
}

export async function findUsersByIds(db: Kysely<DB>, ids: string[]): Promise<Map<string, UserRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/** The phones (E.164) of many users by user id, in one read; unknown ids are absent. */
export async function phonesOf(db: Kysely<DB>, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'phone'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, r.phone]));
}

/**
 * Locks the user's row until the caller's transaction ends, so that another domain can serialise
 * one user's decisions (KYC) without reaching into this table itself.
 */
export async function lockUser(trx: Transaction<DB>, userId: string): Promise<void> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst();
}

/** The user who invited this one (its referral code at first sign-in), if any. */
export async function referrerIdOf(db: Kysely<DB>, inviteeId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users as invitee')
    .innerJoin('users as referrer', 'referrer.referral_code', 'invitee.referred_by_code')
    .select('referrer.id')
    .where('invitee.id', '=', inviteeId)
    .executeTakeFirst();
  return row?.id;
}

export type Invitee = { id: string; name: string; joinedAt: Date };

/** The users who signed up with this user's referral code, oldest first, their names masked. */
export async function inviteesOf(db: Kysely<DB>, userId: string): Promise<Invitee[]> {
  const rows = await db
    .selectFrom('users as referrer')
    .innerJoin('users as invitee', 'invitee.referred_by_code', 'referrer.referral_code')
    .select(['invitee.id', 'invitee.first_name', 'invitee.last_name', 'invitee.phone', 'invitee.created_at'])
    .where('referrer.id', '=', userId)
    .orderBy('invitee.created_at')
    .orderBy('invitee.id')
    .execute();
  return rows.map((row) => ({
    id: row.id,
    name: maskedName(row.first_name, row.last_name, row.phone),
    joinedAt: row.created_at,
  }));
}

/**
 * A name another user may see: the first name and the surname's initial (`Adaeze O.`). Without a
 * name on the profile, the phone with its middle digits hidden (`0803****567`).
 */
export function maskedName(firstName: string | null, lastName: string | null, phone: string): string {
  const first = firstName?.trim() ?? '';
  const initial = lastName?.trim().charAt(0).toUpperCase() ?? '';
  if (first !== '') return initial === '' ? first : `${first} ${initial}.`;
  const local = phone.startsWith('+234') ? `0${phone.slice(4)}` : phone;
  return `${local.slice(0, 4)}****${local.slice(-3)}`;
}

/**
 * The name another user sees (recipients, transfers, their records and notifications), masked
 * (`Adaeze O.`). Once Tier 2 is approved the profile's names are the verified ones and can no longer
 * change, so this is the verified name; before it, the name the user typed, which lookupRecipient
 * marks as not verified (API.md section 14 shows Tier 1 recipients by name).
 */
export const publicName = (user: Pick<UserRow, 'first_name' | 'last_name' | 'phone'>) =>
  maskedName(user.first_name, user.last_name, user.phone);

/** The ids of the users with these phones (E.164), those who exist. */
export async function findUserIdsByPhones(db: Kysely<DB>, phones: string[]): Promise<string[]> {
  if (phones.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where('phone', 'in', phones).execute();
  return rows.map((row) => row.id);
}

/**
 * The verified email addresses of these users, by user id: a user without an address, or whose
 * address is not verified, is not in the map. Takes the caller's handle, so that it can decide in
 * the caller's transaction (notifications decides whom to email in the inbox's).
 */
export async function verifiedEmailsOf(
  db: Kysely<DB> | Transaction<DB>,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('id', 'in', [...userIds])
    .where('email', 'is not', null)
    .where('email_verified_at', 'is not', null)
    .execute();
  return new Map(rows.map((row) => [row.id, row.email!]));
}

/**
 * Records the device a user signs in from (a hash of its User-Agent) and answers whether it is new
 * to a user who had signed in from another before: that sign-in sends security mail. In the
 * sign-in's transaction, so two sign-ins from one new device at once count it once.
 */
export async function recordSignInDevice(
  trx: Transaction<DB>,
  userId: string,
  userAgent: string | undefined,
  now: Date,
): Promise<boolean> {
  const deviceHash = createHash('sha256')
    .update(userAgent ?? '')
    .digest('hex');
  const inserted = await trx
    .insertInto('known_devices')
    .values({ user_id: userId, device_hash: deviceHash, first_seen_at: now })
    .onConflict((oc) => oc.columns(['user_id', 'device_hash']).doNothing())
    .returning('device_hash')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  const others = await trx
    .selectFrom('known_devices')
    .select('device_hash')
    .where('user_id', '=', userId)
    .where('device_hash', '<>', deviceHash)
    .limit(1)
    .execute();
  return others.length > 0;
}

/** A device as a person reads it: the User-Agent, shortened. */
export const deviceLabel = (userAgent: string | undefined): string =>
  userAgent === undefined || userAgent.trim() === '' ? 'an unknown device' : userAgent.trim().slice(0, 120);

/** The price level a user pays (null: the default prices, or no such user). */
export async function priceLevelOf(db: Kysely<DB>, userId: string): Promise<string | null> {
  const row = await db.selectFrom('users').select('price_level').where('id', '=', userId).executeTakeFirst();
  return row?.price_level ?? null;
}

/**
 * Puts a user on a price level (null: back to the default prices). Answers false for an unknown
 * user. Whether the level exists is the catalogue's to say, before this is called.
 */
export async function setPriceLevel(
  db: Kysely<DB>,
  change: { userId: string; level: string | null; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ price_level: change.level, updated_at: change.now })
    .where('id', '=', change.userId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How many users are on each price level; the users on none are counted under null. */
export async function usersByPriceLevel(db: Kysely<DB>): Promise<Map<string | null, number>> {
  const rows = await db
    .selectFrom('users')
    .select((eb) => ['price_level', eb.fn.countAll<string | number | bigint>().as('users')])
    .groupBy('price_level')
    .execute();
  return new Map(rows.map((row) => [row.price_level, Number(row.users)]));
}

/**
 * Which of these users an operator has frozen (API.md 17.4), read FOR SHARE in the caller's
 * transaction: the purchases' and the transfers' debits call it once the wallets are locked. The
 * shared lock is held to their commit, so a freeze (an UPDATE of the row) waits for the debits that
 * read the row unfrozen to commit, and a debit that comes after the freeze's UPDATE waits for its
 * commit and reads the row frozen: no debit decided on "not frozen" commits after a freeze. Shared
 * locks do not conflict, so one user's purchases never wait for each other here.
 */
export async function frozenAmong(trx: Transaction<DB>, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  // Once per batch of purchases: prepared once per connection (the ids go in as one array).
  const { rows } = await statement<{ id: string; frozen: boolean }>('auth.frozen-among')`
          select id, frozen_at is not null as frozen from users
          where id = any(${[...userIds]}::uuid[]) order by id for share`.execute(trx);
  return new Set(rows.filter((row) => row.frozen).map((row) => row.id));
}

/**
 * Which of these users have USSD switched on (API.md 17.6), read FOR SHARE in the caller's transaction
 * as frozenAmong is: a USSD payment's acceptance calls it once the wallet is locked, so switching USSD
 * off (an UPDATE of the row) waits for the payments that read it on to commit, and no payment decided
 * on "on" commits after the switch-off has.
 */
export async function ussdEnabledAmong(
  trx: Transaction<DB>,
  userIds: readonly string[],
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const { rows } = await sql<{ id: string; ussd_enabled: boolean }>`
    select id, ussd_enabled from users
    where id = any(${[...userIds]}::uuid[]) order by id for share`.execute(trx);
  return new Set(rows.filter((row) => row.ussd_enabled).map((row) => row.id));
}

/**
 * The approved KYC tier of each of these users (0 for an id not found), read in the caller's
 * transaction: the limits judge a debit or a credit on it under the person's wallet lock (API.md
 * 17.2). A tier only rises, so a read that misses a rise committed meanwhile is the stricter one.
 */
export async function tiersAmong(
  db: Kysely<DB> | Transaction<DB>,
  userIds: readonly string[],
): Promise<Map<string, number>> {
  if (userIds.length === 0) return new Map();
  const { rows } = await statement<{ id: string; kyc_tier: number }>('auth.tiers-among')`
    select id, kyc_tier from users where id = any(${[...userIds]}::uuid[])`.execute(db);
  return new Map(rows.map((row) => [row.id, row.kyc_tier]));
}
