import { z } from 'zod';
import { defineOperation } from '../operation.ts';
import { startLivenessCheck } from './liveness-checks.ts';
import * as s from './schemas.ts';
import {
  documentUrl,
  getKycStatus,
  type KycDeps,
  listReviews,
  reviewSubmission,
  submitTier1,
  submitTier2,
  submitTier3,
} from './service.ts';

const tags = ['kyc'];

/** What the KYC operations need beyond the service's deps: document URLs and the liveness page. */
export type KycOperationsDeps = KycDeps & {
  /** Signs the service's own short-lived document URLs (local storage). */
  urlKey: Buffer;
  /** The service's own public base URL, which signed document URLs point at. */
  baseUrl: string;
  config: {
    /** The KYC provider's liveness page (config.kyc.livenessUrl). */
    livenessUrl: string;
    /** The sandbox's liveness tokens are accepted (SANDBOX=1). */
    sandboxTokens: boolean;
  };
};

/** The URL (absolute, or a path of this service) with one query parameter set. */
function withQuery(url: string, name: string, value: string): string {
  const absolute = URL.canParse(url);
  const parsed = new URL(url, 'http://this-service.invalid');
  parsed.searchParams.set(name, value);
  return absolute ? parsed.href : `${parsed.pathname}${parsed.search}${parsed.hash}`;
}

/** Tier 3 carries an ID document as base64: its body may be up to 8 MiB (API.md section 1). */
const TIER3_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** The KYC operations, closed over the module's deps. */
export const kycOperations = (deps: KycOperationsDeps) => [
  defineOperation({
    name: 'getKycLivenessUrl',
    method: 'GET',
    auth: 'user',
    summary:
      "Starts a Tier 1 face check: the KYC provider's page (with the check's one-time `state`, valid 30 minutes), which hands its liveness token back to `return` (a path of this service) as `?livenessToken=…&state=…`",
    tags,
    input: z.object({}).strict(),
    output: s.livenessUrlOutput,
    errors: [],
    handler: async ({ caller }) => {
      const check = await startLivenessCheck(deps.db, deps.clock, caller.userId);
      return {
        url: withQuery(deps.config.livenessUrl, 'state', check.state),
        state: check.state,
        expiresAt: check.expiresAt.toISOString(),
      };
    },
  }),
  defineOperation({
    name: 'getKycStatus',
    method: 'GET',
    auth: 'user',
    summary: 'The approved tier and the state of each tier',
    tags,
    input: z.object({}).strict(),
    output: s.kycStatusOutput,
    errors: [],
    handler: ({ caller }) => getKycStatus(deps.db, caller.userId),
  }),
  defineOperation({
    name: 'submitKycTier1',
    method: 'POST',
    auth: 'user',
    summary:
      'Tier 1: the token of a face liveness check done in the browser, with the `state` of the check (getKycLivenessUrl) it came back with. A 409 says why in `details.reason`: `tier_approved`, `check_used` (do the face check again), `submitted_concurrently`',
    tags,
    input: s.submitTier1Input,
    output: s.kycTierView,
    errors: ['CONFLICT', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller, input }) =>
      submitTier1(deps, caller.userId, input, { sandboxTokens: deps.config.sandboxTokens }),
  }),
  defineOperation({
    name: 'submitKycTier2',
    method: 'POST',
    auth: 'user',
    summary:
      "Tier 2: NIN and the account's phone; the NIN name must match the profile name. A 409 says why in `details.reason`: `profile_name_missing` (updateProfile first), `nin_in_use` (the NIN is on another account), `tier_approved`, `tier_pending`, `submitted_concurrently`",
    tags,
    input: s.submitTier2Input,
    output: s.kycTierView,
    errors: ['NOT_FOUND', 'CONFLICT', 'KYC_PREVIOUS_TIER_REQUIRED', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller, input }) => submitTier2(deps, caller.userId, input),
  }),
  defineOperation({
    name: 'submitKycTier3',
    method: 'POST',
    auth: 'user',
    summary:
      'Tier 3: bank account (name must match; `bankCode` one of listBanks, else 400 on data.bankCode) and an ID document; decided by an admin. A 409 says why in `details.reason`: `profile_name_missing`, `tier_approved`, `tier_pending`, `submitted_concurrently`',
    tags,
    input: s.submitTier3Input,
    output: s.kycTierView,
    errors: ['NOT_FOUND', 'CONFLICT', 'KYC_PREVIOUS_TIER_REQUIRED', 'UPSTREAM_UNAVAILABLE'],
    bodyLimitBytes: TIER3_BODY_LIMIT_BYTES,
    handler: ({ caller, input }) => submitTier3(deps, caller.userId, input),
  }),
  defineOperation({
    name: 'getKycDocumentUrl',
    method: 'POST',
    auth: 'user',
    summary: 'A signed URL to one of your documents, valid at most 10 minutes',
    tags,
    input: s.documentUrlInput,
    output: s.documentUrlOutput,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) =>
      documentUrl(deps, { userId: caller.userId, isAdmin: caller.roles.includes('admin') }, input.documentId),
  }),
  defineOperation({
    name: 'adminListKycReviews',
    method: 'GET',
    auth: 'admin',
    summary: 'KYC submissions by status (pending first in arrival order)',
    tags: ['admin'],
    input: s.listReviewsInput,
    output: s.listReviewsOutput,
    errors: [],
    handler: async ({ input }) => {
      const page = await listReviews(deps, input);
      return { ...page, limit: input.limit, offset: input.offset };
    },
  }),
  defineOperation({
    name: 'adminReviewKyc',
    method: 'POST',
    auth: 'admin',
    summary: "Approve or reject a user's pending tier (a rejection needs a reason)",
    tags: ['admin'],
    input: s.reviewInput,
    output: s.kycTierView,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input }) => reviewSubmission(deps, caller.userId, input),
  }),
];
