import { z } from 'zod';
import { toE164 } from '../../phone.ts';
import { clipMessage, exchangeJson, issuePaths, strangerAnswer } from '../http-exchange.ts';
import { toKobo } from './smm-panel-client.ts';
import { type VtuClientOptions, type VtuConnection, vtuConnection } from './vtu-connection.ts';
import {
  catalogueCallsNotOffered,
  type Network,
  notOffered,
  type PurchaseOutcome,
  type PurchaseRequest,
  type RequeryOutcome,
  type RequeryRequest,
  type VtuProvider,
  VtuProviderError,
  type VtuService,
} from './vtu-provider.ts';

// The airtime-to-cash provider client, speaking VTU Africa's Airtime2Cash API
// (shared/reference/providers.md section 3.3, https://vtuafrica.com.ng/api/airtime2cash.php): the
// reseller flow is verify, then the user shares the airtime, then we report it, then the provider
// confirms. Every call is a GET with the API key in the query (`apikey`), under one base URL
// (`https://vtuafrica.com.ng/portal/api`); every answer is `{code, description}` with HTTP 200, code
// 101 meaning the call went through and any other code an error whose words are in
// `description.message`. In the sandbox the same client talks to the simulator at
// /__sandbox/vtu/airtime-cash/portal/api.
//
// The calls:
// - Verify (airtimeToCashLine): `merchant-verify/?serviceName=Airtime2Cash&network=mtn` answers the
//   provider's receiving line for the network, `description.Phone_Number`, which the user shares the
//   airtime to. We hand it on as a local 11-digit number and refuse anything that is not a Nigerian
//   mobile number: a wrong line here sends somebody's airtime to a stranger.
// - Report (purchase): `airtime-cash/?network&sender&sendernumber&amount&sitephone&ref&webhookURL`
//   tells the provider the airtime was shared (amount in whole naira, the face value; sitephone the
//   line the verify gave; ref ours; webhookURL where it calls back when the airtime arrived).
// - Status (requery): the provider has no status query of its own; its webhook re-send,
//   `merchant-verify/?serviceName=Webhook&ref=<ours>&webhookURL=<ours>`, answers the transaction as it
//   stands (and re-sends the callback when it is Completed), so it doubles as one. It finds the
//   transaction by our reference, so a report whose answer was lost is found too.
// - Balance: `merchant-verify/?serviceName=Balance` answers `description.Balance` in naira.
//
// Outcomes of a report:
// - code 101 with Status Completed (the airtime arrived) → success; Pending or Processing → pending;
//   Failed, Declined or Reversed → failed; any other word → unknown.
// - another code with a message that is a known refusal (an invalid API key, an invalid or unavailable
//   network, an amount outside the provider's range, an invalid sending number, a receiving line that
//   is not the verified one, a missing or invalid parameter) → failed: the provider records a report
//   only when it accepts it, so a refused one left nothing behind. An invalid API key is a
//   configuration fault and the reason says so, for the alert.
// - a duplicate reference → unknown, never failed: a transaction with our reference exists (an
//   earlier attempt reached the provider), and the requery finds it.
// - any other message, a timeout, a network error, a 5xx, a 429 or an answer we cannot read → unknown.
//
// Outcomes of a requery: the same Status words; "transaction not found" → not_found (the provider
// never recorded the reference; a caller trusts it only some time after the report, as for every
// provider); any other error, and every non-answer, → unknown.
//
// The callback: the provider POSTs `{ref, service, network, amount, status}` to the webhookURL of the
// report. It is not signed, and nothing here or in the service trusts its body: it only says "requery
// this reference now", and the requery's answer, from a call we made to an address we chose, is what
// settles the transaction. So the callback needs no signature, and a forged one costs one requery.
//
// The amount: a Completed answer (the report's, the status query's) names the transaction's `amount`
// in naira, which is the airtime that arrived (the provider's webhook re-send answers the transaction
// as it stands). It is handed on as `receivedKobo`; the service pays on it, never on more than the
// amount declared (settlement.ts), since only the settlement knows the declared one (the requery does
// not carry it). A Completed answer without an amount we can read (absent, not a positive number of
// naira) is handed on as success without `receivedKobo`: the airtime arrived, how much is not known,
// and no amount is guessed; the settlement pays nothing on it and the requery asks again. It is not
// `unknown`, which would fail the sale once its confirmation window passed, telling the user the
// airtime never came when the provider said it did. The callback's `amount`, like the rest of its
// body, is never read.
//
// Retries: verify, status and balance change nothing (the status re-sends a callback, which is
// harmless by the above), so each is sent once more after a network error or a 5xx, inside the same
// time budget. The report is never repeated: a repeat would at best be a duplicate reference.

/** The base URL is the API's, `https://vtuafrica.com.ng/portal/api`. */
export type AirtimeCashClientOptions = VtuClientOptions & {
  apiKey: string;
  /** Our callback endpoint, sent as webhookURL with every report and status query. */
  callbackUrl: string;
};

/** The network names on the wire: the same words as ours. */
const wireNetworks: Readonly<Record<Network, string>> = {
  mtn: 'mtn',
  airtel: 'airtel',
  glo: 'glo',
  '9mobile': '9mobile',
};

/**
 * The error messages of a report that are refusals: nothing was recorded. Any other message is read
 * as "we do not know" (see the header). The API key's refusal is matched first, for its own reason.
 */
const apiKeyPattern = /invalid api ?key/i;
const refusalPatterns: readonly RegExp[] = [
  /invalid network/i,
  /not available/i,
  /invalid amount/i,
  /amount must be between/i,
  /invalid sender/i,
  /wrong site ?phone/i,
  /missing or invalid parameter/i,
];
const duplicatePattern = /duplicate/i;
const notFoundPattern = /transaction (was )?not found/i;

const code = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\d{1,6}$/)
    .transform(Number),
]);
const envelope = z.object({ code, description: z.unknown() });
const text = z.union([z.string(), z.number()]).transform(String);
const verifyAnswer = z.object({
  Status: z.string(),
  Phone_Number: text,
  Network: z.string().nullish(),
  message: z.string().nullish(),
});
const transactionAnswer = z.object({
  Status: z.string(),
  /** The airtime of the transaction in naira: on a Completed answer, what arrived. Read by receivedOf. */
  amount: z.unknown().optional(),
  ref: text.nullish(),
  /** VTU Africa's own id for the transaction, where it gives one. */
  ReferenceID: text.nullish(),
  message: z.string().nullish(),
});
const balanceAnswer = z.object({ Balance: text });

type Answer =
  | { kind: 'ok'; description: unknown }
  | { kind: 'error'; code: number; message: string }
  | { kind: 'indefinite'; reason: string };

const successWords: ReadonlySet<string> = new Set(['completed', 'successful', 'success']);
const pendingWords: ReadonlySet<string> = new Set(['pending', 'processing']);
const failedWords: ReadonlySet<string> = new Set(['failed', 'declined', 'reversed']);
const referencePattern = /^[A-Za-z0-9_-]{1,64}$/;

/** What every call to the provider needs, made once by createAirtimeCashClient. */
type AirtimeCashConnection = VtuConnection & {
  /** Travels in each query, not in a header. */
  apiKey: string;
  callbackUrl: string;
};

type Path = 'merchant-verify/' | 'airtime-cash/';

export function createAirtimeCashClient(options: AirtimeCashClientOptions): VtuProvider {
  const provider = options.name;
  const connection: AirtimeCashConnection = {
    ...vtuConnection(options, {}),
    apiKey: options.apiKey,
    callbackUrl: options.callbackUrl,
  };
  return {
    name: provider,
    services: new Set<VtuService>(['airtime_to_cash']),
    // Whole naira within the provider's own range, which it checks itself (an amount outside it is
    // a refusal, nothing shared is lost by it): the service's rule for the route sets the range.
    airtimeAmounts: null,
    ...catalogueCallsNotOffered(provider),
    airtimeToCashLine: (network) => receivingLine(connection, network),
    purchase: (request) => report(connection, request),
    requery: (request) => requery(connection, request),
    balance: () => balance(connection),
  };
}

/** One GET with the key in the query; `retry` only for the calls that change nothing (see the header). */
async function send(
  connection: AirtimeCashConnection,
  what: string,
  path: Path,
  params: Record<string, string>,
  retry: boolean,
): Promise<Answer> {
  const query = new URLSearchParams({ apikey: connection.apiKey, ...params }).toString();
  const reply = await exchangeJson(connection.endpoint, {
    operation: path,
    method: 'GET',
    path: `/${path}?${query}`,
    retry,
  });
  if (reply.kind === 'no_answer') return indefinite(`${what} ${reply.reason}`);
  const { status } = reply;
  const parsed = envelope.safeParse(reply.body);
  if (!parsed.success) {
    return indefinite(
      status >= 200 && status < 300
        ? `${what} answered ${status} without the provider's {code, description}`
        : // A 4xx without the provider's envelope comes from something in between (a proxy, a wrong URL).
          `${what} ${strangerAnswer(status, "the provider's body")}`,
    );
  }
  // The provider speaks with HTTP 200; an envelope on a 4xx is still the provider speaking.
  const { code: answerCode, description } = parsed.data;
  if (answerCode === 101) return { kind: 'ok', description };
  return { kind: 'error', code: answerCode, message: errorMessage(answerCode, description) };
}

function indefinite(reason: string): Answer {
  return { kind: 'indefinite', reason: `the airtime-to-cash provider's ${reason}` };
}

/** For verify and balance: the description, or a VtuProviderError. */
async function read(
  connection: AirtimeCashConnection,
  what: string,
  params: Record<string, string>,
): Promise<unknown> {
  const answer = await send(connection, what, 'merchant-verify/', params, true);
  if (answer.kind === 'indefinite') throw new VtuProviderError(connection.provider, answer.reason);
  if (answer.kind === 'error') {
    const configuration = apiKeyPattern.test(answer.message)
      ? ' (check the API key in the configuration)'
      : '';
    throw new VtuProviderError(
      connection.provider,
      `${what}: the provider refused (code ${answer.code}): ${answer.message}${configuration}`,
    );
  }
  return answer.description;
}

/** The outcome a transaction's description gives, for a report or a requery of `reference`. */
function outcomeOf(what: string, reference: string, description: unknown): PurchaseOutcome {
  const parsed = transactionAnswer.safeParse(description);
  if (!parsed.success) {
    return {
      status: 'unknown',
      reason: `the airtime-to-cash provider's ${what} ${unexpected(parsed.error)}`,
    };
  }
  const answer = parsed.data;
  if (answer.ref != null && answer.ref !== '' && answer.ref !== reference) {
    return {
      status: 'unknown',
      reason: `the airtime-to-cash provider's ${what} answered about another transaction (${clipMessage(answer.ref)})`,
    };
  }
  const providerReference = answer.ReferenceID ?? answer.ref ?? reference;
  const word = answer.Status.trim().toLowerCase();
  const message = answer.message ? `: ${clipMessage(answer.message)}` : '';
  if (successWords.has(word)) {
    const receivedKobo = receivedOf(answer.amount);
    return { status: 'success', providerReference, ...(receivedKobo === null ? {} : { receivedKobo }) };
  }
  if (pendingWords.has(word)) return { status: 'pending', providerReference };
  if (failedWords.has(word)) {
    return {
      status: 'failed',
      reason: `the airtime-to-cash provider reports the airtime ${word}${message}`,
    };
  }
  // A word we do not know must not end the transaction either way.
  return {
    status: 'unknown',
    reason: `the airtime-to-cash provider's ${what} answered a status we do not know (${clipMessage(answer.Status)})`,
  };
}

/** Verify: the provider's line that receives the network's airtime. */
async function receivingLine(connection: AirtimeCashConnection, network: Network): Promise<string> {
  const { provider } = connection;
  const wire = wireNetworks[network];
  if (wire === undefined) return notOffered(provider, `airtime-to-cash on ${String(network)}`);
  const description = await read(connection, `verify (${wire})`, {
    serviceName: 'Airtime2Cash',
    network: wire,
  });
  const parsed = verifyAnswer.safeParse(description);
  if (!parsed.success) {
    throw new VtuProviderError(provider, `verify (${wire}): ${unexpected(parsed.error)}`);
  }
  const answer = parsed.data;
  if (answer.Status.trim().toLowerCase() !== 'completed') {
    // The service answered but is not taking this network now ("Unavailable").
    throw new VtuProviderError(
      provider,
      `verify (${wire}): the service is ${clipMessage(answer.Status)}${answer.message ? `: ${clipMessage(answer.message)}` : ''}`,
    );
  }
  if (answer.Network != null && answer.Network.trim().toLowerCase() !== wire) {
    throw new VtuProviderError(
      provider,
      `verify (${wire}): answered for another network (${clipMessage(answer.Network)})`,
    );
  }
  const line = localPhone(answer.Phone_Number);
  if (line === null) {
    throw new VtuProviderError(
      provider,
      `verify (${wire}): the receiving line ${clipMessage(answer.Phone_Number)} is not a Nigerian mobile number`,
    );
  }
  return line;
}

/** The purchase: reports airtime the user shared (never repeated: see the header). */
async function report(connection: AirtimeCashConnection, request: PurchaseRequest): Promise<PurchaseOutcome> {
  if (request.service !== 'airtime_to_cash') return notOffered(connection.provider, request.service);
  const refuse = (why: string): PurchaseOutcome => ({ status: 'failed', reason: `refused locally: ${why}` });
  if (!referencePattern.test(request.reference)) {
    return refuse('the reference is not 1 to 64 letters, digits, _ or -');
  }
  const wire = wireNetworks[request.network];
  if (wire === undefined) {
    return notOffered(connection.provider, `airtime-to-cash on ${String(request.network)}`);
  }
  const sender = localPhone(request.phone);
  if (sender === null) return refuse(`${request.phone} is not a Nigerian mobile number`);
  const sitePhone = localPhone(request.sendTo);
  if (sitePhone === null)
    return refuse(`the receiving line ${request.sendTo} is not a Nigerian mobile number`);
  if (request.amountKobo <= 0n || request.amountKobo % 100n !== 0n) {
    return refuse(`${request.amountKobo} kobo is not a positive whole number of naira`);
  }
  const params = {
    network: wire,
    // The API wants a sender's name or number; we have the number, and it says who shared.
    sender,
    sendernumber: sender,
    amount: String(request.amountKobo / 100n),
    sitephone: sitePhone,
    ref: request.reference,
    webhookURL: connection.callbackUrl,
  };
  const answer = await send(connection, 'report', 'airtime-cash/', params, false);
  if (answer.kind === 'indefinite') return { status: 'unknown', reason: answer.reason };
  if (answer.kind === 'ok') return outcomeOf('report', request.reference, answer.description);
  return reportError(request.reference, answer);
}

/** What the provider's error to a report means (see the header). */
function reportError(reference: string, answer: { code: number; message: string }): PurchaseOutcome {
  const { message } = answer;
  if (apiKeyPattern.test(message)) {
    return {
      status: 'failed',
      reason: `the airtime-to-cash provider refused our API key (check the configuration): ${message}`,
    };
  }
  if (duplicatePattern.test(message)) {
    return {
      status: 'unknown',
      reason: `the airtime-to-cash provider already has a transaction with reference ${reference} (${message}): requery it`,
    };
  }
  if (refusalPatterns.some((pattern) => pattern.test(message))) {
    return { status: 'failed', reason: `the airtime-to-cash provider refused the report: ${message}` };
  }
  return {
    status: 'unknown',
    reason: `the airtime-to-cash provider answered the report with an error we do not know (code ${answer.code}): ${message}`,
  };
}

async function requery(connection: AirtimeCashConnection, request: RequeryRequest): Promise<RequeryOutcome> {
  if (request.service !== 'airtime_to_cash') return notOffered(connection.provider, request.service);
  if (!referencePattern.test(request.reference)) {
    return { status: 'unknown', reason: `the reference ${request.reference} cannot be put on the wire` };
  }
  const answer = await send(
    connection,
    'status query',
    'merchant-verify/',
    { serviceName: 'Webhook', ref: request.reference, webhookURL: connection.callbackUrl },
    true,
  );
  if (answer.kind === 'indefinite') return { status: 'unknown', reason: answer.reason };
  if (answer.kind === 'ok') return outcomeOf('status query', request.reference, answer.description);
  if (notFoundPattern.test(answer.message)) return { status: 'not_found' };
  const configuration = apiKeyPattern.test(answer.message) ? ' (check the API key in the configuration)' : '';
  return {
    status: 'unknown',
    reason: `the airtime-to-cash provider answered the status query with an error (code ${answer.code}): ${answer.message}${configuration}`,
  };
}

async function balance(connection: AirtimeCashConnection): Promise<bigint> {
  const { provider } = connection;
  const parsed = balanceAnswer.safeParse(await read(connection, 'balance', { serviceName: 'Balance' }));
  if (!parsed.success) throw new VtuProviderError(provider, `balance: ${unexpected(parsed.error)}`);
  // Some accounts write thousands separators ("12,345.67").
  const kobo = toKobo(parsed.data.Balance.replace(/,/g, ''), 100n, 'down');
  if (kobo === null) throw new VtuProviderError(provider, 'balance: the provider wrote an unreadable amount');
  return kobo;
}

/**
 * The airtime a Completed answer confirms, in kobo: a positive number of naira written as a JSON
 * number or a string ("1500", "1500.00", "1,500"), a fraction of a kobo rounded down (never more than
 * the provider wrote). Null for anything else: absent, empty, zero, negative or not a number.
 */
function receivedOf(amount: unknown): bigint | null {
  const text =
    typeof amount === 'number' && Number.isFinite(amount)
      ? String(amount)
      : typeof amount === 'string'
        ? amount.replace(/,/g, '')
        : null;
  if (text === null) return null;
  const kobo = toKobo(text, 100n, 'down');
  return kobo !== null && kobo > 0n ? kobo : null;
}

/** A Nigerian mobile number in any form toE164 takes, as the local 11-digit form; null otherwise. */
function localPhone(phone: string): string | null {
  const e164 = toE164(phone);
  return e164 === null ? null : `0${e164.slice(4)}`;
}

/** The provider's words for an error: `description.message`, or a description that is itself text. */
function errorMessage(answerCode: number, description: unknown): string {
  if (typeof description === 'string' && description.trim() !== '') return clipMessage(description);
  if (typeof description === 'object' && description !== null) {
    const message = (description as { message?: unknown }).message;
    if (typeof message === 'string' && message.trim() !== '') return clipMessage(message);
  }
  return `code ${answerCode} without a message`;
}

function unexpected(error: z.ZodError): string {
  return `answered with an unexpected body (at ${issuePaths(error)})`;
}
