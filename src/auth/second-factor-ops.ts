import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { confirmTotp, enrolTotp, resetTotp, type SecondFactorDeps, verifyTotp } from './second-factor.ts';

// The administrators' second factor (API.md section 17.4): the three operations an administrator
// reaches before it is verified. They need the admin role only (skipsSecondFactor); every other
// admin operation needs the session verified by one of the last two (http/router.ts). Then the
// reset of another administrator's lost authenticator, which needs the caller's own verified.

const tags = ['admin'];

export const secondFactorOperations = (deps: SecondFactorDeps) => [
  defineOperation({
    name: 'adminEnrolTotp',
    method: 'POST',
    auth: 'admin',
    skipsSecondFactor: true,
    // The answer is the secret: never kept under the Idempotency-Key, so no replay hands it out again.
    storesAnswer: false,
    summary: 'Enrol a TOTP second factor: a new secret, shown once',
    description:
      'Enrol a TOTP second factor: a new secret, shown once. A new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) and its otpauth:// URL, replacing one not yet confirmed. Once one is confirmed, 409 CONFLICT: the secret is never shown again.',
    tags,
    input: s.emptyInput,
    output: s.adminEnrolTotpOutput,
    errors: ['CONFLICT'],
    handler: ({ caller }) => enrolTotp(deps, caller),
  }),
  defineOperation({
    name: 'adminConfirmTotp',
    method: 'POST',
    auth: 'admin',
    skipsSecondFactor: true,
    summary: 'Confirm the enrolled TOTP with its first code; the session is verified for 15 minutes',
    description:
      'Confirm the enrolled TOTP with its first code; the session is verified for 15 minutes. Confirms the enrolled secret with a code of it, and verifies the session as adminVerifyTotp does. A wrong code (or one already used) is 403 FORBIDDEN with details.attemptsLeft; five wrong in a row lock the second factor for 30 minutes (423 PIN_LOCKED). 409 CONFLICT before enrolment or once confirmed.',
    tags,
    input: s.totpCodeInput,
    output: s.totpVerifiedOutput,
    errors: ['CONFLICT', 'FORBIDDEN', 'PIN_LOCKED'],
    handler: ({ caller, input }) => confirmTotp(deps, caller, input.code),
  }),
  defineOperation({
    name: 'adminVerifyTotp',
    method: 'POST',
    auth: 'admin',
    skipsSecondFactor: true,
    summary: "Verify the session's second factor with a TOTP code, for 15 minutes",
    description:
      "Verify the session's second factor with a TOTP code, for 15 minutes. Until verifiedUntil, admin operations answer for this session; before, 403 SECOND_FACTOR_REQUIRED. A wrong code (or one already used) is 403 FORBIDDEN with details.attemptsLeft; five wrong in a row lock the second factor for 30 minutes (423 PIN_LOCKED). 409 CONFLICT before a second factor is confirmed.",
    tags,
    input: s.totpCodeInput,
    output: s.totpVerifiedOutput,
    errors: ['CONFLICT', 'FORBIDDEN', 'PIN_LOCKED'],
    handler: ({ caller, input }) => verifyTotp(deps, caller, input.code),
  }),
  defineOperation({
    name: 'adminResetTotp',
    method: 'POST',
    auth: 'admin',
    summary: "Reset another administrator's lost authenticator, and end their sessions",
    description:
      "Reset another administrator's lost authenticator, and end their sessions. Four eyes: removes the named administrator's TOTP enrolment (confirmed or not) and ends every session of theirs, so that they sign in again and, until they enrol again (adminEnrolTotp, then adminConfirmTotp), their admin operations answer 403 SECOND_FACTOR_REQUIRED with details.enrolled false. They are told (security mail). The reason is kept in the audit log: write how the administrator asking was confirmed. Resetting your own is 403 FORBIDDEN with details.reason four_eyes; an adminId that is not an administrator's, or one with no enrolment, is 404 NOT_FOUND.",
    tags,
    input: s.resetTotpInput,
    output: s.resetTotpOutput,
    errors: ['NOT_FOUND', 'FORBIDDEN'],
    handler: ({ caller, input, withCommit }) => resetTotp(deps, withCommit, caller, input.adminId),
  }),
];
