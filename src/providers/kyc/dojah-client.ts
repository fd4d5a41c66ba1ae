import { z } from 'zod';
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
// rejected credentials, 429, 5xx, a body we cannot read). Nothing is retried here: the caller decides.

export type DojahKycProviderOptions = {
  baseUrl: () => string;
  appId: string;
  secretKey: string;
  timeoutMs: number;
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

type Answer = { kind: 'ok'; body: unknown } | { kind: 'not_found' };

export function createDojahKycProvider(options: DojahKycProviderOptions): KycProvider {
  /** One request, no retry. `what` names the call in error messages; it never holds a secret. */
  async function send(what: string, path: string, body?: Record<string, string>): Promise<Answer> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      AppId: options.appId,
      Authorization: options.secretKey,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const signal = AbortSignal.timeout(options.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${options.baseUrl()}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal,
        redirect: 'error',
      });
      // The timeout covers the body too: a provider that sends headers and then stalls is unavailable.
      text = await response.text();
    } catch (error) {
      throw unavailable(what, describeFetchError(error, options.timeoutMs), error);
    }

    if (response.status === 200) return { kind: 'ok', body: parseJson(what, text) };
    if (response.status === 404) {
      const parsed = safeJson(text);
      if (parsed !== undefined && notFoundAnswer.safeParse(parsed).success) return { kind: 'not_found' };
      // A bare 404 (an HTML page, another service's envelope) means the base URL is wrong, not that the
      // record does not exist: answering "not found" would reject every user.
      throw unavailable(what, 'answered 404 without the provider’s not-found body (is the base URL right?)');
    }
    if (response.status === 401 || response.status === 403) {
      throw unavailable(
        what,
        `refused our credentials (${response.status}): check the KYC app id and secret key`,
      );
    }
    if (response.status === 429) throw unavailable(what, 'is rate limiting us (429)');
    if (response.status >= 500) throw unavailable(what, `failed upstream (${response.status})`);
    throw unavailable(what, `answered ${response.status}${providerMessage(text)}`);
  }

  function parseJson(what: string, text: string): unknown {
    const parsed = safeJson(text);
    if (parsed === undefined) throw unavailable(what, 'answered 200 with a body that is not JSON');
    return parsed;
  }

  function validate<T>(what: string, schema: z.ZodType<T>, body: unknown): T {
    const result = schema.safeParse(body);
    if (!result.success) {
      const fields = result.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
      throw unavailable(what, `answered 200 with an unexpected body (at ${fields})`);
    }
    return result.data;
  }

  return {
    async verifyLiveness(token): Promise<LivenessResult> {
      const what = 'liveness verify';
      const query = new URLSearchParams({ reference_id: token });
      const answer = await send(what, `/api/v1/kyc/liveness/verify?${query}`);
      if (answer.kind === 'not_found') return { status: 'unknown_token' };
      const { entity } = validate(what, livenessAnswer, answer.body);
      if (entity.reference_id !== token) throw unavailable(what, 'answered for a different reference');
      if (entity.liveness_check && entity.liveness_probability > livenessProbabilityMin) {
        return { status: 'passed', reference: entity.reference_id };
      }
      const reason =
        entity.message !== undefined && entity.message.trim() !== ''
          ? entity.message.trim()
          : `liveness check failed (probability ${entity.liveness_probability})`;
      return { status: 'failed', reference: entity.reference_id, reason };
    },

    async lookupNin(request): Promise<NinLookup> {
      const what = 'NIN verify';
      const answer = await send(what, '/api/v1/kyc/nin/verify', {
        nin: request.nin,
        first_name: request.firstName,
        last_name: request.lastName,
      });
      if (answer.kind === 'not_found') return { found: false };
      const { entity } = validate(what, ninAnswer, answer.body);
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
    },

    async lookupBankAccount(request): Promise<BankAccountLookup> {
      const what = 'bank account verify';
      const answer = await send(what, '/api/v1/kyc/nuban/verify', {
        account_number: request.accountNumber,
        bank_code: request.bankCode,
        first_name: request.firstName,
        last_name: request.lastName,
      });
      if (answer.kind === 'not_found') return { found: false };
      const { entity } = validate(what, nubanAnswer, answer.body);
      if (entity.account_number !== request.accountNumber || entity.bank_code !== request.bankCode) {
        throw unavailable(what, 'answered for a different account');
      }
      return { found: true, accountName: entity.account_name.trim() };
    },
  };
}

function unavailable(what: string, happened: string, cause?: unknown): KycProviderUnavailableError {
  return new KycProviderUnavailableError(
    `KYC provider (${what}) ${happened}`,
    cause !== undefined ? { cause } : undefined,
  );
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `did not answer within ${timeoutMs} ms`;
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `is unreachable (${message}${cause})`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The provider's own `{"error": "..."}` text, short, for an unexpected status. */
function providerMessage(text: string): string {
  const parsed = notFoundAnswer.safeParse(safeJson(text));
  return parsed.success ? `: ${parsed.data.error.slice(0, 200)}` : '';
}

function blankToNull(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? null : trimmed;
}
