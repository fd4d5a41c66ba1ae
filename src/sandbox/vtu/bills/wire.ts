import { createHash } from 'node:crypto';
import { lagosWallClock } from '../../../lagos-time.ts';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../../money.ts';
import { billsServiceById, categoryNames } from '../bills-catalogue.ts';
import type { SandboxBillsOrder } from './state.ts';

// VTpass's wire format as the sandbox bills provider reads and writes it (shared/reference/providers.md
// section 2): `{code, response_description}` answers, naira amounts, Lagos-time request ids.

export type Body = Record<string, unknown>;
export type Answer = Record<string, unknown>;

export const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

/** How far a request_id's minute may be from the clock's: clocks drift, and a minute can turn in flight. */
const requestIdSkewMinutes = 5;
const requestIdPattern = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})[A-Za-z0-9]*$/;

/** A purchase or requery answer: the order as it stands, with its product fields once delivered. */
export function answerFor(order: SandboxBillsOrder, pendingCode = '000'): Answer {
  const [code, description] =
    order.status === 'failed'
      ? ['016', 'TRANSACTION FAILED']
      : order.status === 'pending'
        ? [pendingCode, pendingCode === '099' ? 'TRANSACTION IS PROCESSING' : 'TRANSACTION PROCESSED']
        : ['000', 'TRANSACTION SUCCESSFUL'];
  const amount = koboToNaira(order.amountKobo);
  return {
    code,
    response_description: description,
    requestId: order.requestId,
    amount,
    transaction_date: order.createdAt.toISOString(),
    purchased_code: order.status === 'delivered' ? (order.extras.purchased_code ?? '') : '',
    content: { transactions: transactionJson(order, amount) },
    ...(order.status === 'delivered' ? order.extras : {}),
  };
}

function transactionJson(order: SandboxBillsOrder, amount: number) {
  const service = billsServiceById.get(order.serviceID)!;
  return {
    status: order.status === 'delivered' ? 'delivered' : order.status,
    product_name: order.productName,
    unique_element: order.recipient,
    unit_price: koboToNaira(order.amountKobo / BigInt(order.quantity)),
    quantity: order.quantity,
    service_verification: null,
    channel: 'api',
    commission: 0,
    total_amount: amount,
    discount: null,
    type: categoryNames[service.category],
    email: 'sandbox@billrail.test',
    phone: order.phone,
    name: null,
    convinience_fee: 0,
    amount,
    platform: 'api',
    method: 'api',
    transactionId: order.transactionId,
    commission_details: { amount: 0, rate: '0.00', rate_type: 'percent', computation_type: 'default' },
  };
}

/** True when the id opens with a real Lagos minute within requestIdSkewMinutes of now. */
export function requestIdIsCurrent(requestId: string, now: Date): boolean {
  const match = requestIdPattern.exec(requestId);
  if (match === null) return false;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return false;
  const stated = Date.UTC(year, month - 1, day, hour, minute);
  if (new Date(stated).getUTCDate() !== day) return false;
  // Both sides as Lagos wall-clock minutes, so no offset is assumed anywhere.
  const lagosNow = lagosWallClock(now);
  return Math.abs(stated - lagosNow) <= requestIdSkewMinutes * 60_000;
}

/** Stable digits from a seed, so a request's token and pins read the same on every requery. */
export function digitsFrom(seed: string, length: number): string {
  let digits = '';
  for (let round = 0; digits.length < length; round++) {
    const hex = createHash('sha256').update(`${seed}:${round}`).digest('hex');
    digits += BigInt(`0x${hex}`).toString().slice(1);
  }
  return digits.slice(0, length);
}

/** A wire amount (naira, a number or a decimal string) in kobo; null when it is not one. */
export function wireKobo(value: unknown): bigint | null {
  if (typeof value === 'number') return isNairaAmount(value) ? nairaToKobo(value) : null;
  if (typeof value !== 'string') return null;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value.trim());
  if (match === null) return null;
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

export function codeOnly(code: string, description: string): Answer {
  return { code, response_description: description };
}

export function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}
