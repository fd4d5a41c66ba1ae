import { z } from 'zod';
import {
  type EndpointOptions,
  exchangeJson,
  issuePaths,
  type JsonEndpoint,
  jsonEndpoint,
  strangerAnswer,
} from '../http-exchange.ts';
import {
  type BankAccountLookup,
  type KycProvider,
  KycProviderUnavailableError,
  type LivenessResult,
  type NinLookup,
} from './kyc-provider.ts';

// The KYC provider client, speaking Dojah's REST shapes (shared/reference/providers.md section 6):
// headers `AppId` and `Authorization: <secret>` (no "Bearer"), answers wrapped in `{entity: {...}}`,
// 404 for "no such record". In the sandbox the same client talks to the simulator under
// /__sandbox/kyc.
//
// Three outcomes per call: an answer (found, not found, passed, failed), or
// KycProviderUnavailableError for everything that is not a usable answer (network error, timeout,
// a redirect, rejected credentials, 429, 5xx, a body we cannot read). Nothing is retried here, reads
// included: the caller decides.

export type DojahKycProviderOptions = EndpointOptions & {
  appId: string;
  secretKey: string;
};

/** Dojah's rule: a face is live when liveness_check is true and the probability is above 50. */
const livenessProbabilityMin = 50;

const livenessAnswer = z.object({
  entity: z.object({
    reference_id: z.string().min(1),
    liveness_check: z.boolean(),
    liveness_probability: z.number().min(0).max(100),
    message: z.string().optional(),
  }),
});

const ninAnswer = z.object({
  entity: z.object({
    nin: z.string(),
    first_name: z.string().trim().min(1),
    middle_name: z.string().nullish(),
    last_name: z.string().trim().min(1),
    phone_number: z.string().nullish(),
  }),
});

const nubanAnswer = z.object({
  entity: z.object({
    account_number: z.string(),
    bank_code: z.string(),
    account_name: z.string().trim().min(1),
  }),
});

/** The body Dojah sends with a 404: `{"error": "..."}`. A 404 without it is not the provider speaking. */
const notFoundAnswer = z.object({ error: z.string() });

/** What every call to Dojah needs, made once by createDojahKycProvider. */
type DojahConnection = {
  /** The base URL and the `AppId` and `Authorization` every call carries. */
  endpoint: JsonEndpoint;
};

/** The request of one operation of the KycProvider interface. */
type RequestOf<K extends keyof KycProvider> = Parameters<KycProvider[K]>[0];

export function createDojahKycProvider(options: DojahKycProviderOptions): KycProvider {
  const connection: DojahConnection = {
    endpoint: jsonEndpoint('dojah', options, { AppId: options.appId, Authorization: options.secretKey }),
  };
  return {
    verifyLiveness: (token) => verifyLiveness(connection, token),
    lookupNin: (request) => lookupNin(connection, request),
    lookupBankAccount: (request) => lookupBankAccount(connection, request),
  };
}

/**
 * One request, never repeated (see the header): the entity of Dojah's 200 answer, read by `answer`,
 * or null for Dojah's "no such record" (a 404 with its error body). `what` names the call in errors;
 * it holds no secret.
 */
async function send<T>(
  connection: DojahConnection,
  what: string,
  answer: z.ZodType<{ entity: T }>,
  path: string,
  body?: Record<string, string>,
): Promise<T | null> {
  const reply = await exchangeJson(connection.endpoint, {
    operation: what,
    method: body === undefined ? 'GET' : 'POST',
    path,
    ...(body !== undefined ? { body: { json: body } } : {}),
    retry: false,
  });
  if (reply.kind === 'no_answer') throw unavailable(what, reply.reason);
  const { status } = reply;
  if (status === 200) {
    const parsed = answer.safeParse(reply.body);
    if (!parsed.success) {
      throw unavailable(what, `answered 200 with an unexpected body (at ${issuePaths(parsed.error)})`);
    }
    return parsed.data.entity;
  }
  if (status === 404) {
    if (notFoundAnswer.safeParse(reply.body).success) return null;
    // A bare 404 (an HTML page, another service's envelope) means the base URL is wrong, not that the
    // record does not exist: answering "not found" would reject every user.
    throw unavailable(what, strangerAnswer(404, 'the provider’s not-found body'));
  }
  if (status === 401 || status === 403) {
    throw unavailable(what, `refused our credentials (${status}): check the KYC app id and secret key`);
  }
  throw unavailable(what, `answered ${status}${providerMessage(reply.body)}`);
}

async function verifyLiveness(connection: DojahConnection, token: string): Promise<LivenessResult> {
  const what = 'liveness verify';
  const query = new URLSearchParams({ reference_id: token });
  const entity = await send(connection, what, livenessAnswer, `/api/v1/kyc/liveness/verify?${query}`);
  if (entity === null) return { status: 'unknown_token' };
  if (entity.reference_id !== token) throw unavailable(what, 'answered for a different reference');
  if (entity.liveness_check && entity.liveness_probability > livenessProbabilityMin) {
    return { status: 'passed', reference: entity.reference_id };
  }
  const reason =
    entity.message !== undefined && entity.message.trim() !== ''
      ? entity.message.trim()
      : `liveness check failed (probability ${entity.liveness_probability})`;
  return { status: 'failed', reference: entity.reference_id, reason };
}

async function lookupNin(connection: DojahConnection, request: RequestOf<'lookupNin'>): Promise<NinLookup> {
  const what = 'NIN verify';
  const entity = await send(connection, what, ninAnswer, '/api/v1/kyc/nin/verify', {
    nin: request.nin,
    first_name: request.firstName,
    last_name: request.lastName,
  });
  if (entity === null) return { found: false };
  if (entity.nin !== request.nin) throw unavailable(what, 'answered for a different NIN');
  return {
    found: true,
    record: {
      firstName: entity.first_name.trim(),
      middleName: blankToNull(entity.middle_name),
      lastName: entity.last_name.trim(),
      phone: blankToNull(entity.phone_number),
    },
  };
}

async function lookupBankAccount(
  connection: DojahConnection,
  request: RequestOf<'lookupBankAccount'>,
): Promise<BankAccountLookup> {
  const what = 'bank account verify';
  const entity = await send(connection, what, nubanAnswer, '/api/v1/kyc/nuban/verify', {
    account_number: request.accountNumber,
    bank_code: request.bankCode,
    first_name: request.firstName,
    last_name: request.lastName,
  });
  if (entity === null) return { found: false };
  if (entity.account_number !== request.accountNumber || entity.bank_code !== request.bankCode) {
    throw unavailable(what, 'answered for a different account');
  }
  return { found: true, accountName: entity.account_name.trim() };
}

function unavailable(what: string, happened: string): KycProviderUnavailableError {
  return new KycProviderUnavailableError(`KYC provider (${what}) ${happened}`);
}

/** The provider's own `{"error": "..."}` text, short, for an unexpected status. */
function providerMessage(body: unknown): string {
  const parsed = notFoundAnswer.safeParse(body);
  return parsed.success ? `: ${parsed.data.error.slice(0, 200)}` : '';
}

function blankToNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}
