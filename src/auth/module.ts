import type { Batching } from '../db/batching.ts';
import type { DomainModule } from '../module.ts';
import type { Caller } from '../operation.ts';
import { type AuthDeps, authOperations } from './ops.ts';
import { createSharedPinReads, type SharedPinReads } from './pin.ts';
import { createAuthenticator, purgeExpiredSessions } from './sessions.ts';
import { phonesOf, priceLevelOf, setPriceLevel, usersByPriceLevel, verifiedEmailsOf } from './users.ts';

// Accounts (API.md sections 4, 5 and 10): sign-in by SMS code, sessions, the profile and its
// verified email, the transaction PIN. Other modules reach users through `api` below.

/** The job that deletes the tokens and sessions that can no longer be used. */
const JOB_AUTH_SESSION_PURGE = 'auth.purge-expired-sessions';

export type AuthModuleDeps = AuthDeps & {
  /** Batches the reads that many requests make at once (the authentication, the shared PIN reads). */
  batching: Batching;
};

export type AuthModule = DomainModule & {
  api: {
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
  };
};

export function createAuthModule(deps: AuthModuleDeps): AuthModule {
  return {
    operations: authOperations(deps),
    jobs: [
      {
        // Session tokens are kept until they expire; then they are deleted, with the sessions that
        // can no longer be refreshed. Safe to run twice at once: each run deletes what has expired.
        name: JOB_AUTH_SESSION_PURGE,
        cron: '*/15 * * * *',
        retryLimit: 3,
        retryDelaySeconds: 30,
        expireInSeconds: 300,
        runOnClockAdvance: true,
        handler: () => purgeExpiredSessions(deps),
      },
    ],
    subscribers: [],
    api: {
      authenticate: createAuthenticator(deps, deps.batching),
      sharedPinReads: createSharedPinReads(deps.db, deps.batching),
      verifiedEmailsOf,
      phonesOf,
      priceLevelOf: (userId) => priceLevelOf(deps.db, userId),
      setPriceLevel: (change) => setPriceLevel(deps.db, { ...change, now: deps.clock.now() }),
      usersByPriceLevel: () => usersByPriceLevel(deps.db),
    },
  };
}
