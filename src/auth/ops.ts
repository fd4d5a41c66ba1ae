import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { defineOperation } from '../operation.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import type { SmsSender } from '../providers/sms/sms-gateway.ts';
import type { HashKeys } from '../shared/keyed-hash.ts';
import { sendVerificationCode, setEmail, verifyEmail } from './email-verification.ts';
import { consumeOtp, requestOtp } from './otp.ts';
import { setTransactionPin } from './pin.ts';
import * as s from './schemas.ts';
import { refreshSession, signOut, startSession } from './sessions.ts';
import {
  deviceLabel,
  findOrCreateUser,
  findUserById,
  recordSignInDevice,
  setProfileNames,
  toUserView,
} from './users.ts';

const tags = ['accounts'];

/** What the accounts' operations need: sign-in codes go by SMS, email verification codes by email. */
export type AuthDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  logger: Logger;
  sms: SmsSender;
  mailer: Mailer;
  /**
   * The server-side secret mixed into every stored code and PIN hash (SECRET_PEPPER), and the previous
   * one while a rotation lasts (decision 0035).
   */
  pepper: HashKeys;
  /** Phones (E.164) whose users are administrators (ADMIN_PHONES). */
  adminPhones: ReadonlySet<string>;
};

/** The accounts operations, closed over the module's deps. */
export const authOperations = (deps: AuthDeps) => [
  defineOperation({
    name: 'requestOtp',
    method: 'POST',
    auth: 'public',
    summary: 'Send a 6-digit sign-in code by SMS (one per phone per 60 s)',
    tags,
    input: s.requestOtpInput,
    output: s.requestOtpOutput,
    errors: ['UPSTREAM_UNAVAILABLE'],
    rateLimitPhone: (input) => input.phone,
    handler: ({ input }) => requestOtp(deps, input.phone),
  }),
  defineOperation({
    name: 'verifyOtp',
    method: 'POST',
    auth: 'public',
    summary: 'Sign in with the SMS code; creates the user on first sign-in',
    tags,
    input: s.verifyOtpInput,
    output: s.verifyOtpOutput,
    errors: ['UNAUTHENTICATED', 'VALIDATION_ERROR'],
    // The answer is a session: never kept for replay (API.md section 3); a used code is refused.
    storesAnswer: false,
    rateLimitPhone: (input) => input.phone,
    handler: ({ input, ip, userAgent }) => signInWithCode(deps, input, ip, userAgent),
  }),
  defineOperation({
    name: 'refreshSession',
    method: 'POST',
    auth: 'public',
    summary: 'Exchange a refresh token for new tokens (the old refresh token is revoked)',
    tags,
    input: s.refreshSessionInput,
    output: s.tokenPair,
    errors: ['UNAUTHENTICATED'],
    // New tokens: never kept for replay. A retry presents the rotated token, which is reuse and
    // revokes the session (API.md section 4): the price of no replay handing tokens to anyone.
    storesAnswer: false,
    handler: ({ input }) => refreshSession(deps, input.refreshToken),
  }),
  defineOperation({
    name: 'signOut',
    method: 'POST',
    auth: 'user',
    summary: 'Revoke the current session',
    tags,
    input: s.emptyInput,
    output: s.okOutput,
    errors: [],
    handler: async ({ caller }) => {
      await signOut(deps, caller.sessionId);
      return { ok: true as const };
    },
  }),
  defineOperation({
    name: 'getMe',
    method: 'GET',
    auth: 'user',
    summary: 'The signed-in user',
    tags,
    input: s.emptyInput,
    output: s.userView,
    errors: ['NOT_FOUND'],
    handler: async ({ caller }) => {
      const user = await findUserById(deps.db, caller.userId);
      if (user === undefined) throw notFound('user');
      return toUserView(user, deps.adminPhones);
    },
  }),
  defineOperation({
    name: 'updateProfile',
    method: 'POST',
    auth: 'user',
    summary: 'Change first name, last name or email (the names only until KYC tier 2 verifies them)',
    tags,
    input: s.updateProfileInput,
    output: s.userView,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input }) => updateProfile(deps, caller.userId, input),
  }),
  defineOperation({
    name: 'verifyEmail',
    method: 'POST',
    auth: 'user',
    summary: 'Verify your email with the 6-digit code emailed to it',
    tags,
    input: s.verifyEmailInput,
    output: s.userView,
    errors: ['NOT_FOUND'],
    handler: async ({ caller, input }) => {
      await verifyEmail(deps, caller.userId, input.code);
      const user = await findUserById(deps.db, caller.userId);
      if (user === undefined) throw notFound('user');
      return toUserView(user, deps.adminPhones);
    },
  }),
  defineOperation({
    name: 'setTransactionPin',
    method: 'POST',
    auth: 'user',
    summary: 'Set the 4-digit transaction PIN; changing an existing PIN needs an SMS code (requestOtp)',
    tags,
    input: s.setTransactionPinInput,
    output: s.setTransactionPinOutput,
    errors: ['FORBIDDEN'],
    handler: async ({ caller, input }) => {
      await setTransactionPin(deps, { id: caller.userId, phone: caller.phone }, input.pin, input.otpCode);
      return { hasPin: true as const };
    },
  }),
];

/**
 * verifyOtp: one transaction, so that an unknown referral code on a first sign-in rolls the code's use
 * back with the user it would have created, and the person can correct it and sign in with the same SMS.
 */
async function signInWithCode(
  deps: AuthDeps,
  input: z.output<typeof s.verifyOtpInput>,
  ip: string,
  userAgent: string | undefined,
): Promise<z.input<typeof s.verifyOtpOutput>> {
  const signedIn = await deps.db.transaction().execute(async (trx) => {
    const check = await consumeOtp({ ...deps, db: trx }, input.phone, input.code);
    if (!check.ok) return check;
    const now = deps.clock.now();
    const { user } = await findOrCreateUser(trx, input.phone, input.referralCode, now);
    if (await recordSignInDevice(trx, user.id, userAgent, now)) {
      await publishEvent(deps.jobs, trx, {
        type: 'auth.new_device_sign_in',
        userId: user.id,
        signInId: newId(),
        device: deviceLabel(userAgent),
        ip,
        occurredAt: now.toISOString(),
      });
    }
    return { ok: true as const, user };
  });
  if (!signedIn.ok) {
    throw new AppError('UNAUTHENTICATED', 'the code is wrong or expired', {
      details: { attemptsLeft: signedIn.attemptsLeft },
    });
  }
  const { user } = signedIn;
  const tokens = await startSession(deps, user.id);
  return { ...tokens, user: toUserView(user, deps.adminPhones) };
}

/** updateProfile: the names, and a new email with its verification code sent after the commit. */
async function updateProfile(
  deps: AuthDeps,
  userId: string,
  input: z.output<typeof s.updateProfileInput>,
): Promise<z.input<typeof s.userView>> {
  let user = await setProfileNames(deps.db, userId, input, deps.clock.now());
  if (user === undefined) throw notFound('user');
  if (input.email !== undefined) {
    const email = input.email.toLowerCase();
    const set = await setEmail(deps, userId, email);
    user = set.user ?? user;
    // Sent after the commit, like an SMS code; an address that cannot be reached is one the user
    // fixes or sets again for a new code, and the profile change stands.
    if (set.code !== null) {
      await sendVerificationCode(deps.mailer, email, set.code).catch((error: unknown) =>
        deps.logger.warn({ err: error }, 'the email verification code could not be sent'),
      );
    }
  }
  return toUserView(user, deps.adminPhones);
}
