import type { AnyOperation, OperationAuth } from '../operation.ts';

// What /openapi.json says beyond the operations' schemas: a description of every operation (who may
// call it, how its inputs travel, what its Idempotency-Key does), the tags defined at the top with
// what each groups, and the response headers the router and the rate limiter send. A generated
// client and a reader of the document learn from these what they would otherwise learn by trial.

/**
 * What each tag of the operations groups. A tag used by an operation and missing here leaves the
 * document with an undescribed tag, which `npm run lint:openapi` and test/http/openapi.test.ts refuse.
 */
export const tagDescriptions: Readonly<Record<string, string>> = {
  accounts:
    'Sign-in with a code sent by SMS, sessions, the profile and its email, the transaction PIN, notification settings, and closing the account',
  wallet: "The wallet's balances",
  limits:
    "CBN tier limits: the daily debit limit, the maximum balance and what is held over it, the person's own limit",
  funding: 'Adding money to the wallet (checkout, dedicated virtual accounts) and the wallet history',
  vtu: 'Airtime, data, cable, electricity, betting, exam pins, social services and airtime-to-cash: catalogues, prices, purchases and their history',
  beneficiaries: 'Saved recipients, to buy for them again',
  savings: 'Savings locks: money held for a fixed number of days, back in the wallet at maturity',
  growth: 'Daily check-in rewards, savings milestones and referrals',
  transfers: 'Wallet-to-wallet transfers between people (KYC Tier 2)',
  notifications: 'The inbox, broadcasts and polls, and Web Push subscriptions',
  kyc: 'Identity verification: face liveness (Tier 1), NIN (Tier 2), bank account and ID document (Tier 3)',
  disputes: 'Problems reported on a money movement, and how they were resolved',
  adjustments:
    "Operators' corrections of a person's wallet, four eyes: proposed by one administrator, posted once another approves",
  reconciliation:
    "Reconciliation with the providers' own records: runs that sort every payment and purchase of a period into buckets, resolved once by an operator",
  schedules: 'Purchases approved once with the PIN and run at a date, or every day, week or month',
  'bulk-orders': 'Airtime or data for up to 100 numbers in one order, approved with one PIN',
  'data-export': 'A copy of your data (Nigeria Data Protection Act 2023): one JSON file, kept 7 days',
  admin: 'For administrators: KYC reviews, alerts, broadcasts, markups, reconciliation and the ledger check',
};

const authSentence: Readonly<Record<OperationAuth, string>> = {
  public: 'No token is needed.',
  user: 'Needs the bearer token of a signed-in user.',
  admin: 'Needs the bearer token of an administrator.',
};

/** The operation's description: its summary (or its own description), then how it is called. */
export function operationDescription(op: AnyOperation): string {
  const own = op.description ?? op.summary;
  const sentences = [/[.!?)]$/.test(own) ? own : `${own}.`, authSentence[op.auth as OperationAuth]];
  if (op.method === 'GET') {
    sentences.push('Its inputs are query parameters.');
  } else if (op.storesAnswer === false) {
    sentences.push(
      'Send a fresh UUID as Idempotency-Key. Its answer carries credentials, so it is never kept for replay: the same key runs the operation again.',
    );
  } else {
    sentences.push(
      'Send a fresh UUID as Idempotency-Key: the same key and body again within 24 hours replay the first answer, with Idempotent-Replayed: true.',
    );
  }
  return sentences.join(' ');
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const rateLimitHeaders = {
  'X-RateLimit-Limit': {
    description:
      'Requests the caller may make in the current window (RATE_LIMIT_PER_MINUTE per user when signed in, RATE_LIMIT_ANONYMOUS_PER_MINUTE per address otherwise)',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current window',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the window starts again',
    schema: { type: 'integer', minimum: 0 },
  },
};

const retryAfterHeader = {
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer', minimum: 1 },
  },
};

const replayedHeader = {
  'Idempotent-Replayed': {
    description:
      'true when this is the answer kept for an earlier request with the same Idempotency-Key and body, sent again',
    schema: { type: 'string', enum: ['true'] },
  },
};

/**
 * Declares, on each operation's responses, the headers that come with them: the rate limiter's count
 * on every answer that passed it (a success, a 429); Retry-After with 429 RATE_LIMITED, 423
 * PIN_LOCKED and 503 SERVICE_UNAVAILABLE; Idempotent-Replayed on the answers a POST keeps under its key (a success and the
 * refusals its handler gives, 4xx other than 429), for a POST whose answers are kept at all.
 * Changes the document in place.
 */
export function declareResponseHeaders(
  document: { paths?: unknown },
  operations: readonly AnyOperation[],
): void {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const op of operations) {
    const pathItem = paths[`/_serverFn/${op.name}`];
    const operation = isObject(pathItem) ? pathItem[op.method.toLowerCase()] : undefined;
    const responses = isObject(operation) && isObject(operation.responses) ? operation.responses : {};
    const replayable = op.method === 'POST' && op.storesAnswer !== false;
    for (const [status, response] of Object.entries(responses)) {
      if (!isObject(response)) continue;
      const code = Number(status);
      const headers: JsonObject = isObject(response.headers) ? { ...response.headers } : {};
      if (code === 200 || code === 429) Object.assign(headers, rateLimitHeaders);
      if (code === 429 || code === 423 || code === 503) Object.assign(headers, retryAfterHeader);
      if (replayable && (code === 200 || (code >= 400 && code < 500 && code !== 429))) {
        Object.assign(headers, replayedHeader);
      }
      if (Object.keys(headers).length > 0) response.headers = headers;
    }
  }
}

/** The tags the operations use, defined once at the top of the document with what each groups. */
export function documentTags(
  operations: readonly AnyOperation[],
): Array<{ name: string; description?: string }> {
  const used = [...new Set(operations.flatMap((op) => op.tags))].sort();
  return used.map((name) => {
    const description = tagDescriptions[name];
    return description === undefined ? { name } : { name, description };
  });
}
