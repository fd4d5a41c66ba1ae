import type { Context } from '../context.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import { defineOperation } from '../operation.ts';
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

const emailDeps = (ctx: Context) => ({ db: ctx.db, clock: ctx.clock, pepper: ctx.config.secrets.pepper });

export const authOperations = [
  defineOperation({
    name: 'requestOtp',
    method: 'POST',
    auth: 'public',
    summary: 'Send a 6-digit sign-in code by SMS (one per phone per 60 s)',
    tags,
    input: s.requestOtpInput,
    output: s.requestOtpOutput,
    errors: ['UPSTREAM_UNAVAILABLE'],
    handler: ({ ctx, input }) =>
      requestOtp(
        { db: ctx.db, clock: ctx.clock, pepper: ctx.config.secrets.pepper, sms: ctx.sms },
        input.phone,
      ),
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
    handler: async ({ ctx, input, ip, userAgent }) => {
      // One transaction: an unknown referral code on a first sign-in rolls the code's use back with
      // the user it would have created, so the person can correct it and sign in with the same SMS.
      const signedIn = await ctx.db.transaction().execute(async (trx) => {
        const check = await consumeOtp(
          { db: trx, clock: ctx.clock, pepper: ctx.config.secrets.pepper },
          input.phone,
          input.code,
        );
        if (!check.ok) return check;
        const now = ctx.clock.now();
        const { user } = await findOrCreateUser(trx, input.phone, input.referralCode, now);
        if (await recordSignInDevice(trx, user.id, userAgent, now)) {
          await publishEvent(ctx.jobs, trx, {
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
      const tokens = await startSession({ db: ctx.db, clock: ctx.clock }, user.id);
      return { ...tokens, user: toUserView(user, ctx.adminPhones) };
    },
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
    handler: ({ ctx, input }) => refreshSession({ db: ctx.db, clock: ctx.clock }, input.refreshToken),
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
    handler: async ({ ctx, caller }) => {
      await signOut({ db: ctx.db, clock: ctx.clock }, caller.sessionId);
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
    handler: async ({ ctx, caller }) => {
      const user = await findUserById(ctx.db, caller.userId);
      if (user === undefined) throw notFound('user');
      return toUserView(user, ctx.adminPhones);
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
    handler: async ({ ctx, caller, input }) => {
      let user = await setProfileNames(ctx.db, caller.userId, input, ctx.clock.now());
      if (user === undefined) throw notFound('user');
      if (input.email !== undefined) {
        const email = input.email.toLowerCase();
        const set = await setEmail(emailDeps(ctx), caller.userId, email);
        user = set.user ?? user;
        // Sent after the commit, like an SMS code; an address that cannot be reached is one the user
        // fixes or sets again for a new code, and the profile change stands.
        if (set.code !== null) {
          await sendVerificationCode(ctx.mailer, email, set.code).catch((error: unknown) =>
            ctx.logger.warn({ err: error }, 'the email verification code could not be sent'),
          );
        }
      }
      return toUserView(user, ctx.adminPhones);
    },
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
    handler: async ({ ctx, caller, input }) => {
      await verifyEmail(emailDeps(ctx), caller.userId, input.code);
      const user = await findUserById(ctx.db, caller.userId);
      if (user === undefined) throw notFound('user');
      return toUserView(user, ctx.adminPhones);
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
    handler: async ({ ctx, caller, input }) => {
      await setTransactionPin(
        { db: ctx.db, clock: ctx.clock, pepper: ctx.config.secrets.pepper, jobs: ctx.jobs },
        { id: caller.userId, phone: caller.phone },
        input.pin,
        input.otpCode,
      );
      return { hasPin: true as const };
    },
  }),
];
