import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../ids.ts';
import { creditDedicatedTransfer } from './dedicated-accounts.ts';
import { creditTopup, type FundingDeps } from './service.ts';

// The payment provider's signed webhooks (SPEC.md "Inbound webhook endpoint", "Authentication" 5,
// "Events"). The route (http/payment-webhook-route.ts) checks the signature over the raw bytes,
// then stores the event and enqueues its processing in one transaction, and answers 200. Processing
// is keyed on the stored event: it runs once per event (the row is locked and marked processed in
// the transaction that acts on it), and crediting is keyed on the reference, so a redelivery, a
// replay or a verification racing the webhook changes nothing.

export const JOB_PAYMENT_WEBHOOK_EVENT = 'payments.webhook-event';

/** The largest webhook body accepted; Paystack's events are a few KiB. */
export const webhookBodyLimitBytes = 256 * 1024;

/** Stored event and reference names are cut to this length (they are for look-ups, not evidence). */
const storedNameLengthMax = 200;

const signaturePattern = /^[0-9a-f]{128}$/;

/**
 * True when the header is the lowercase hex HMAC-SHA-512 of the raw body under the secret. The
 * comparison is constant-time over equal lengths; the format check before it looks only at the
 * header, never at the secret.
 */
export function signatureValid(rawBody: Buffer, header: unknown, secret: string): boolean {
  if (typeof header !== 'string' || !signaturePattern.test(header)) return false;
  const expected = Buffer.from(createHmac('sha512', secret).update(rawBody).digest('hex'), 'utf8');
  const given = Buffer.from(header, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

type Parsed = { ok: true; event: string | null; reference: string | null } | { ok: false };

function parseEnvelope(text: string | null): Parsed {
  if (text === null) return { ok: false };
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { ok: false };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false };
  const envelope = value as { event?: unknown; data?: unknown };
  const data = envelope.data as { reference?: unknown } | null | undefined;
  const name = (v: unknown) => (typeof v === 'string' && v !== '' ? v.slice(0, storedNameLengthMax) : null);
  return {
    ok: true,
    event: name(envelope.event),
    reference: typeof data === 'object' && data !== null ? name(data.reference) : null,
  };
}

/** The body as text when it is valid UTF-8 without NUL (what PostgreSQL text holds), else null. */
function utf8Text(raw: Buffer): string | null {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw);
    return text.includes('\u0000') ? null : text;
  } catch {
    return null;
  }
}

export type StoredEvent = {
  eventId: string;
  /** False when the same bytes had been stored before (a redelivery). */
  created: boolean;
  /** False when there is nothing to process (unparseable, or processed already). */
  needsProcessing: boolean;
};

/**
 * Stores a signature-checked body once per distinct bytes and, for a new parseable event, enqueues
 * its processing in the same transaction: the job exists exactly when the event does.
 */
export async function storePaymentEvent(
  deps: Pick<FundingDeps, 'db' | 'clock' | 'jobs'>,
  rawBody: Buffer,
): Promise<StoredEvent> {
  const sha256 = createHash('sha256').update(rawBody).digest('hex');
  const text = utf8Text(rawBody);
  const parsed = parseEnvelope(text);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('payment_events')
      .values({
        id: newId(),
        received_at: now,
        body: text ?? rawBody.toString('base64'),
        body_encoding: text === null ? 'base64' : 'utf8',
        body_sha256: sha256,
        event: parsed.ok ? parsed.event : null,
        reference: parsed.ok ? parsed.reference : null,
        // An unparseable body has nothing to act on: it is kept as evidence and closed at once.
        processed_at: parsed.ok ? null : now,
        outcome: parsed.ok ? null : 'unparseable',
      })
      // A concurrent delivery of the same bytes waits here for ours, then stores nothing.
      .onConflict((oc) => oc.column('body_sha256').doNothing())
      .returning(['id', 'processed_at'])
      .executeTakeFirst();
    if (inserted !== undefined) {
      if (parsed.ok) await deps.jobs.send(JOB_PAYMENT_WEBHOOK_EVENT, { eventId: inserted.id }, { db: trx });
      return { eventId: inserted.id, created: true, needsProcessing: parsed.ok };
    }
    const existing = await trx
      .selectFrom('payment_events')
      .select(['id', 'processed_at'])
      .where('body_sha256', '=', sha256)
      .executeTakeFirstOrThrow();
    return { eventId: existing.id, created: false, needsProcessing: existing.processed_at === null };
  });
}

/** charge.success data as it must be to credit: Paystack's fields, amounts in kobo. */
const chargeSuccessData = z.object({
  reference: z.string().min(1).max(100),
  status: z.literal('success'),
  currency: z.literal('NGN'),
  amount: z
    .number()
    .int()
    .positive()
    .refine((n) => Number.isSafeInteger(n), 'a safe integer'),
});

export type EventOutcome =
  | 'credited'
  | 'already_credited'
  | 'unknown_reference'
  | 'ignored_event'
  | 'invalid_charge'
  | 'unparseable';

/**
 * Processes a stored event once. Safe to run any number of times and concurrently (the route after
 * commit and the job): the event row is locked, and an event already processed is left alone.
 * Returns the outcome, or null when the event was processed before (or does not exist).
 */
export async function processPaymentEvent(
  deps: Pick<FundingDeps, 'db' | 'clock' | 'jobs'>,
  eventId: string,
): Promise<EventOutcome | null> {
  return deps.db.transaction().execute(async (trx) => {
    const event = await trx
      .selectFrom('payment_events')
      .select(['id', 'body', 'body_encoding', 'processed_at'])
      .where('id', '=', eventId)
      .forUpdate()
      .executeTakeFirst();
    if (event === undefined || event.processed_at !== null) return null;

    const outcome = await decide(event.body_encoding === 'utf8' ? event.body : null);
    await trx
      .updateTable('payment_events')
      .set({ processed_at: deps.clock.now(), outcome })
      .where('id', '=', event.id)
      .execute();
    return outcome;

    async function decide(text: string | null): Promise<EventOutcome> {
      let envelope: { event?: unknown; data?: unknown };
      try {
        envelope = JSON.parse(text ?? '') as { event?: unknown; data?: unknown };
      } catch {
        return 'unparseable';
      }
      if (typeof envelope !== 'object' || envelope === null) return 'unparseable';
      // transfer.* events belong to outbound transfers, which arrive later; they are kept, unprocessed
      // by anything but this outcome, until then.
      if (envelope.event !== 'charge.success') return 'ignored_event';
      const data = chargeSuccessData.safeParse(envelope.data);
      if (!data.success) return 'invalid_charge';
      const payment = { reference: data.data.reference, paidKobo: BigInt(data.data.amount) };
      const outcome = await creditTopup(deps, trx, { ...payment, source: 'webhook' });
      // No top-up intent: a bank transfer into a dedicated account, when it is one of ours.
      if (outcome !== 'unknown_reference') return outcome;
      return creditDedicatedTransfer(deps, trx, { ...payment, data: envelope.data });
    }
  });
}
