import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Batching } from '../db/batching.ts';
import type { DB } from '../db/schema.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import type { Caller, Role } from '../operation.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import type { SmsSender } from '../providers/sms/sms-gateway.ts';
import type { HashKeys } from '../shared/keyed-hash.ts';
import { sealingKey } from '../shared/sealed-box.ts';
import { closeUser } from './account-closure.ts';
import { operatorOperations } from './operator-ops.ts';
import { authOperations } from './ops.ts';
import {
  type BuyerState,
  createSharedPinReads,
  type PinState,
  readBuyerStates,
  type SharedPinReads,
  verifyTransactionPin,
} from './pin.ts';
import { purgeExpiredEmailCodes, purgeExpiredSignInCodes } from './retention.ts';
import { totpEnrolled } from './second-factor.ts';
import { secondFactorOperations } from './second-factor-ops.ts';
import { createAuthenticator, purgeExpiredSessions } from './sessions.ts';
import {
  findUserById,
  findUserByPhone,
  findUserIdsByPhones,
  findUsersByIds,
  frozenAmong,
  type Invitee,
  inviteesOf,
  kycTierOf,
  lockUser,
  phonesOf,
  priceLevelOf,
  publicName,
  referrerIdOf,
  rolesOf,
  setKycTier,
  setPriceLevel,
  setVerifiedName,
  tiersAmong,
  type UserRow,
  usersByPriceLevel,
  ussdEnabledAmong,
  verifiedEmailsOf,
} from './users.ts';
import { ussdSwitchOperations } from './ussd-switch.ts';

export type { BuyerState, Invitee, PinState, UserRow };

// Accounts (API.md sections 4, 5 and 10): sign-in by SMS code, sessions, the profile and its
// verified email, the transaction PIN. Other modules reach users through `api` below.

/** The job that deletes the tokens and sessions that can no longer be used. */
const sessionPurgeJob = defineJob('auth.purge-expired-sessions', noPayload);

export type AuthModuleDeps = {
  /** Where users, codes, sessions and PINs are stored (users.ts, otp.ts, sessions.ts, pin.ts). */
  db: Kysely<DB>;
  /** When a code, a session or a PIN lock expires, and when a sign-in happened. */
  clock: Clock;
  /** Enqueues the accounts' events (a sign-in on a new device, a changed PIN) in their transaction. */
  jobs: JobQueue;
  /** Where an email verification code that could not be sent is logged. */
  logger: Logger;
  /** Sends the sign-in codes by SMS (otp.ts). */
  sms: SmsSender;
  /** Sends the email verification codes (email-verification.ts). */
  mailer: Mailer;
  /**
   * The server-side secret mixed into every stored code and PIN hash (SECRET_PEPPER), and the previous
   * one while a rotation lasts (decision 0035).
   */
  pepper: HashKeys;
  /** Phones (E.164) whose users are administrators (ADMIN_PHONES). */
  adminPhones: ReadonlySet<string>;
  /** Batches the reads that many requests make at once (the authentication, the shared PIN reads). */
  batching: Batching;
  /**
   * The key administrators' TOTP secrets are sealed under (ADMIN_TOTP_KEY, else SECRET_PEPPER outside
   * production), from which second-factor.ts derives its own.
   */
  totpSealingSecret: string;
};

export type AuthModule = DomainModule & {
  api: {
    /** Whether an administrator has confirmed a TOTP second factor (the router says so when refusing). */
    totpEnrolled: (userId: string) => Promise<boolean>;
    /** The caller an access token belongs to, or null when it is unknown, expired or revoked (batched). */
    authenticate: (accessToken: string) => Promise<Caller | null>;
    /** A user's PIN columns read under a shared row lock, batched: right PINs are judged on it (pin.ts). */
    sharedPinReads: SharedPinReads;
    /**
     * The verified addresses of many users by user id, in one read on the handle given (the caller's
     * transaction, where it decides in one); the others are absent.
     */
    verifiedEmailsOf: typeof verifiedEmailsOf;
    /** The phones of many users by user id, in one read (an operator's view of whom to call). */
    phonesOf: typeof phonesOf;
    /** The price level a user pays (null: the default prices): the catalogue prices with it. */
    priceLevelOf: (userId: string) => Promise<string | null>;
    /** Puts a user on a price level or back on the default (null); false for no such user. */
    setPriceLevel: (change: { userId: string; level: string | null }) => Promise<boolean>;
    /** How many users are on each price level (null: on none). */
    usersByPriceLevel: () => Promise<Map<string | null, number>>;
    /** A user's row by id, undefined for none (its names, phone, tier and PIN columns). */
    findUserById: (userId: string) => Promise<UserRow | undefined>;
    /** The user with this phone (E.164), if any. */
    findUserByPhone: (phone: string) => Promise<UserRow | undefined>;
    /** The roles of the user with this phone (E.164): `admin` too for a phone of ADMIN_PHONES. */
    rolesOf: (phone: string) => Role[];
    /** Many users by id, in one read; unknown ids are absent from the map. */
    findUsersByIds: (ids: string[]) => Promise<Map<string, UserRow>>;
    /** The ids of the users with these phones (E.164), those who exist. */
    findUserIdsByPhones: (phones: string[]) => Promise<string[]>;
    /** The highest KYC tier the user has been approved for (0 when none). */
    kycTierOf: (userId: string) => Promise<number>;
    /** Locks the user's row in the caller's transaction, to serialise one user's decisions (KYC). */
    lockUser: typeof lockUser;
    /** Records an approved KYC tier, in the caller's transaction (the KYC decision's). */
    setKycTier: typeof setKycTier;
    /** Makes these the profile's verified names, in the caller's transaction (Tier 2's approval). */
    setVerifiedName: typeof setVerifiedName;
    /** The user who invited this one (their referral code at first sign-in), if any. */
    referrerIdOf: (inviteeId: string) => Promise<string | undefined>;
    /** The users who signed up with this user's referral code, oldest first, names masked. */
    inviteesOf: (userId: string) => Promise<Invitee[]>;
    /** The name another user sees (`Adaeze O.`): the verified one once Tier 2 is approved. */
    publicName: typeof publicName;
    /**
     * Throws PIN_NOT_SET, INVALID_PIN or PIN_LOCKED unless the PIN is right and not locked, decided
     * on the user row under its lock; `seen`, the PIN columns read without a lock, only chooses how.
     */
    verifyTransactionPin: (userId: string, pin: string, seen?: PinState) => Promise<void>;
    /**
     * The tier, PIN columns and price level of many users, read without a lock by one statement (the
     * purchases arriving together share it); a user not found is absent. The PIN columns only choose
     * how verifyTransactionPin checks the PIN.
     */
    readBuyerStates: (userIds: string[]) => Promise<Map<string, BuyerState>>;
    /**
     * Which of these users an operator froze (API.md 17.4), read FOR SHARE in the caller's
     * transaction once their wallets are locked: a debit decided on it cannot commit after a freeze.
     */
    frozenAmong: typeof frozenAmong;
    /** Which of these users have USSD switched on, read FOR SHARE in a USSD payment's acceptance. */
    ussdEnabledAmong: typeof ussdEnabledAmong;
    /** Each user's approved KYC tier, in the caller's transaction: what the limits judge by (API.md 17.2). */
    tiersAmong: typeof tiersAmong;
    /**
     * Closes the account in the caller's transaction (decision 0047): its sessions and devices gone,
     * its phone, names and email a pseudonym, so that it can never be signed in to again.
     */
    closeUser: typeof closeUser;
    /** Retention (decision 0054): one batch of the sign-in codes expired with their day's window. */
    purgeExpiredSignInCodes(now: Date, batchMax: number): Promise<number>;
    /** Retention: one batch of the email codes expired. */
    purgeExpiredEmailCodes(now: Date, batchMax: number): Promise<number>;
  };
};

export type AuthApi = AuthModule['api'];

export function createAuthModule(deps: AuthModuleDeps): AuthModule {
  const sharedPinReads = createSharedPinReads(deps.db, deps.batching);
  // Built once: a PIN check is on the purchase's and the transfer's path.
  const pinDeps = { ...deps, sharedPinReads };
  return {
    operations: [
      ...authOperations(deps),
      ...ussdSwitchOperations({
        db: deps.db,
        clock: deps.clock,
        verifyTransactionPin: (userId, pin) => verifyTransactionPin(pinDeps, userId, pin),
      }),
      ...operatorOperations(deps),
      ...secondFactorOperations({
        db: deps.db,
        clock: deps.clock,
        sealingKey: sealingKey(deps.totpSealingSecret, 'admin-totp'),
        adminPhones: deps.adminPhones,
        jobs: deps.jobs,
      }),
    ],
    jobs: [
      jobDefinition(sessionPurgeJob, {
        // Session tokens are kept until they expire; then they are deleted, with the sessions that
        // can no longer be refreshed. Safe to run twice at once: each run deletes what has expired.
        cron: '*/15 * * * *',
        retryLimit: 3,
        retryDelaySeconds: 30,
        expireInSeconds: 300,
        runOnClockAdvance: true,
        handler: () => purgeExpiredSessions(deps),
      }),
    ],
    subscribers: [],
    api: {
      authenticate: createAuthenticator(deps, deps.batching),
      totpEnrolled: (userId) => totpEnrolled(deps.db, userId),
      sharedPinReads,
      verifiedEmailsOf,
      phonesOf,
      priceLevelOf: (userId) => priceLevelOf(deps.db, userId),
      setPriceLevel: (change) => setPriceLevel(deps.db, { ...change, now: deps.clock.now() }),
      usersByPriceLevel: () => usersByPriceLevel(deps.db),
      findUserById: (userId) => findUserById(deps.db, userId),
      findUserByPhone: (phone) => findUserByPhone(deps.db, phone),
      rolesOf: (phone) => rolesOf(phone, deps.adminPhones),
      findUsersByIds: (ids) => findUsersByIds(deps.db, ids),
      findUserIdsByPhones: (phones) => findUserIdsByPhones(deps.db, phones),
      kycTierOf: (userId) => kycTierOf(deps.db, userId),
      lockUser,
      setKycTier,
      setVerifiedName,
      referrerIdOf: (inviteeId) => referrerIdOf(deps.db, inviteeId),
      inviteesOf: (userId) => inviteesOf(deps.db, userId),
      publicName,
      verifyTransactionPin: (userId, pin, seen) => verifyTransactionPin(pinDeps, userId, pin, seen),
      readBuyerStates: (userIds) => readBuyerStates(deps.db, userIds),
      frozenAmong,
      ussdEnabledAmong,
      tiersAmong,
      closeUser,
      purgeExpiredSignInCodes: (now, batchMax) => purgeExpiredSignInCodes(deps.db, now, batchMax),
      purgeExpiredEmailCodes: (now, batchMax) => purgeExpiredEmailCodes(deps.db, now, batchMax),
    },
  };
}
