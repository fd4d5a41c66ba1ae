import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountNumberPattern, refuse, routeOptions, text, unresolvableAccountNumber } from './requests.ts';
import { accountName, type PaymentsSimulator } from './simulator.ts';
import { bankJson, banks, sandboxBanks } from './wire.ts';

// Paystack's List Banks and Resolve Account Number. GET /bank lists the Nigerian banks of wire.ts
// (with a retired bank and a bank listed twice, as Paystack's list has), by cursor when asked. Resolve:
// any 10-digit account at a known bank code resolves to a name (a dedicated account's own name, else a
// name made from the digits), except 0000000000: 404 (no such account). An unknown bank code or a
// malformed account number: 422.

export function registerBankRoutes(api: FastifyInstance, sim: PaymentsSimulator): void {
  api.get('/bank', routeOptions, async (request, reply) => listBanks(sim, request, reply));
  api.get('/bank/resolve', routeOptions, async (request, reply) => resolveAccount(sim, request, reply));
}

/**
 * The Nigerian banks (any other country or currency has none here), all at once, or by cursor with
 * use_cursor=true: perPage at a time (at most state.bankPageSizeMax), meta.next the cursor of the next
 * page and null on the last, as Paystack pages them.
 */
function listBanks(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const query = request.query as Record<string, string | undefined>;
  const nigerian =
    (query.country === undefined || query.country === 'nigeria') &&
    (query.currency === undefined || query.currency === 'NGN');
  const listed = nigerian ? sandboxBanks : [];
  if (query.use_cursor !== 'true') {
    return { status: true, message: 'Banks retrieved', data: listed.map(bankJson) };
  }
  const perPage = Number(query.perPage ?? '50');
  if (!Number.isInteger(perPage) || perPage < 1) return refuse(reply, 400, 'Invalid perPage');
  const after = query.next === undefined ? 0 : bankCursorId(query.next);
  if (after === null) return refuse(reply, 400, 'Invalid cursor');
  const pageSize = Math.min(perPage, sim.payments.bankPageSizeMax);
  const rest = listed.filter((b) => b.id > after);
  const page = rest.slice(0, pageSize);
  // The previous page starts after the entry pageSize + 1 before this page's first (or at the start).
  const earlier = listed.filter((b) => b.id <= after);
  return {
    status: true,
    message: 'Banks retrieved',
    data: page.map(bankJson),
    meta: {
      next: rest.length > pageSize ? bankCursor(page.at(-1)!.id) : null,
      previous: query.next === undefined ? null : bankCursor(earlier.at(-pageSize - 1)?.id ?? 0),
      perPage: pageSize,
    },
  };
}

function resolveAccount(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const query = request.query as { account_number?: unknown; bank_code?: unknown };
  const accountNumber = text(query.account_number);
  const bankCode = text(query.bank_code);
  const bank = bankCode === undefined ? undefined : banks.get(bankCode);
  if (bank === undefined) return refuse(reply, 422, `Unknown bank code: ${bankCode ?? ''}`);
  if (accountNumber === undefined || !accountNumberPattern.test(accountNumber)) {
    return refuse(reply, 422, 'Account number must be 10 digits');
  }
  if (accountNumber === unresolvableAccountNumber) {
    return refuse(reply, 404, 'Could not resolve account name. Check parameters or try again.');
  }
  return {
    status: true,
    message: 'Account number resolved',
    data: {
      account_number: accountNumber,
      account_name: accountName(sim.payments, accountNumber),
      bank_id: bank.id,
    },
  };
}

/** Paystack's cursors are base64 text such as "YmFuazoxNjk=" (bank:169): the last id of a page. */
function bankCursor(id: number): string {
  return Buffer.from(`bank:${id}`).toString('base64');
}

/** The id a cursor of bankCursor names, or null when it is not one. */
function bankCursorId(cursor: string): number | null {
  const match = /^bank:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match === null ? null : Number(match[1]);
}
