import type { FastifyReply } from 'fastify';

// How the sandbox payment provider reads a request and refuses one: Paystack's `{status: false,
// message}` on its API, the service's envelope on the sandbox's own controls.

export const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

export const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const accountNumberPattern = /^\d{10}$/;
/** The account number nothing resolves (404 on resolve, refused as a transfer recipient). */
export const unresolvableAccountNumber = '0000000000';

export type Body = Record<string, unknown>;

/** Paystack's refusal: `{status: false, message}`. */
export function refuse(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ status: false, message });
}

/** The service's envelope, for the sandbox's own control endpoints. */
export function invalid(reply: FastifyReply, message: string) {
  return reply.code(400).send({ success: false, error: { code: 'VALIDATION_ERROR', message } });
}

export function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * A positive integer amount in kobo, exactly: a JSON number JSON carried exactly (a safe integer) or,
 * from a form, a string of digits. Anything else is null.
 */
export function wireAmount(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : null;
  if (typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value)) return BigInt(value);
  return null;
}

/** An http(s) URL, or undefined when the value is not one. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Metadata as an object (Paystack also takes it stringified); null when absent, undefined when bad. */
export function metadataObject(value: unknown): Record<string, unknown> | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

/** A fresh key for the map (random codes practically never collide; this makes sure). */
export function uniqueKey(map: ReadonlyMap<string, unknown>, make: () => string): string {
  for (;;) {
    const key = make();
    if (!map.has(key)) return key;
  }
}
