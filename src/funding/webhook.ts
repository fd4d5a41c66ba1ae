import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../ids.ts';
import { creditDedicatedTransfer, dedicatedPaymentOf } from './dedicated-accounts.ts';
import { creditTopup, type FundingDeps } from './service.ts';
import { applyTransferOutcome, type TransferEnd } from './transfers.ts';

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
  const [stored] = await storePaymentEvents(deps, [rawBody]);
  return stored!;
}

/**
 * storePaymentEvent for many bodies in one transaction (one commit, a few statements), answering
 * for each body in order. The same bytes twice in one batch are one event: the first is `created`.
 */
export async function storePaymentEvents(
  deps: Pick<FundingDeps, 'db' | 'clock' | 'jobs'>,
  rawBodies: Buffer[],
): Promise<StoredEvent[]> {
  const now = deps.clock.now();
  const bodies = rawBodies.map((raw) => {
    const text = utf8Text(raw);
    return { raw, text, sha256: createHash('sha256').update(raw).digest('hex'), parsed: parseEnvelope(text) };
  });
  const distinct = [...new Map(bodies.map((b) => [b.sha256, b])).values()];
  return deps.db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('payment_events')
      .values(
        distinct.map(({ raw, text, sha256, parsed }) => ({
          id: newId(),
          received_at: now,
          body: text ?? raw.toString('base64'),
          body_encoding: text === null ? ('base64' as const) : ('utf8' as const),
          body_sha256: sha256,
          event: parsed.ok ? parsed.event : null,
          reference: parsed.ok ? parsed.reference : null,
          // An unparseable body has nothing to act on: it is kept as evidence and closed at once.
          processed_at: parsed.ok ? null : now,
          outcome: parsed.ok ? null : 'unparseable',
        })),
      )
      // A concurrent delivery of the same bytes waits here for ours, then stores nothing.
      .onConflict((oc) => oc.column('body_sha256').doNothing())
      .returning(['id', 'body_sha256', 'processed_at'])
      .execute();
    const created = new Map(inserted.map((row) => [row.body_sha256, row]));
    await deps.jobs.sendMany(
      JOB_PAYMENT_WEBHOOK_EVENT,
      inserted.filter((row) => row.processed_at === null).map((row) => ({ eventId: row.id })),
      { db: trx },
    );
    const redelivered = distinct.filter((b) => !created.has(b.sha256)).map((b) => b.sha256);
    const existing =
      redelivered.length === 0
        ? new Map<string, { id: string; processed_at: Date | null }>()
        : new Map(
            (
              await trx
                .selectFrom('payment_events')
                .select(['id', 'body_sha256', 'processed_at'])
                .where('body_sha256', 'in', redelivered)
                .execute()
            ).map((row) => [row.body_sha256, row]),
          );
    const answered = new Set<string>();
    return bodies.map(({ sha256 }) => {
      const first = !answered.has(sha256);
      answered.add(sha256);
      const fresh = created.get(sha256);
      if (fresh !== undefined) {
        return { eventId: fresh.id, created: first, needsProcessing: first && fresh.processed_at === null };
      }
      const row = existing.get(sha256);
      if (row === undefined) throw new Error('a stored payment event vanished inside its transaction');
      return { eventId: row.id, created: false, needsProcessing: first && row.processed_at === null };
    });
  });
}

/**
 * Gathers the webhook bodies that arrive while a batch is being stored into the next batch, so that
 * under load many deliveries share one transaction (group commit) and at rest each is stored at
 * once. Every delivery is answered only after the batch holding it committed: nothing is
 * acknowledged before it is durable. One batch is stored at a time per process.
 */
export function createPaymentEventInbox(
  deps: Pick<FundingDeps, 'db' | 'clock' | 'jobs'>,
  options: { batchMax: number },
): { store(rawBody: Buffer): Promise<StoredEvent>; drained(): Promise<void> } {
  type Waiting = { raw: Buffer; resolve: (stored: StoredEvent) => void; reject: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | null = null;

  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, options.batchMax);
      waiting = waiting.slice(batch.length);
      try {
        const stored = await storePaymentEvents(
          deps,
          batch.map((w) => w.raw),
        );
        for (const [i, w] of batch.entries()) w.resolve(stored[i]!);
      } catch (error) {
        // The whole batch rolled back: every delivery in it gets its 500, and the provider retries.
        for (const w of batch) w.reject(error);
      }
    }
    flushing = null;
  }

  return {
    store(raw) {
      return new Promise<StoredEvent>((resolve, reject) => {
        waiting.push({ raw, resolve, reject });
        flushing ??= flush();
      });
    },
    drained: async () => {
      await flushing;
    },
  };
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

/** transfer.* data as it must be to act on: the reference, and the amount in kobo when given. */
const transferData = z.object({
  reference: z.string().min(1).max(100),
  amount: z
    .number()
    .int()
    .positive()
    .refine((n) => Number.isSafeInteger(n), 'a safe integer')
    .optional(),
  reason: z.string().nullish(),
  gateway_response: z.string().nullish(),
});

const transferEvents: Record<string, TransferEnd> = {
  'transfer.success': 'success',
  'transfer.failed': 'failed',
  'transfer.reversed': 'reversed',
};

export type EventOutcome =
  | 'credited'
  | 'already_credited'
  | 'unknown_reference'
  | 'ignored_event'
  | 'invalid_charge'
  | 'invalid_transfer'
  | 'transfer_settled'
  | 'transfer_failed'
  | 'transfer_reversed'
  | 'transfer_unchanged'
  | 'transfer_conflict'
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
      const transferEnd = typeof envelope.event === 'string' ? transferEvents[envelope.event] : undefined;
      if (transferEnd !== undefined) return onTransferEvent(transferEnd, envelope.data);
      if (envelope.event !== 'charge.success') return 'ignored_event';
      const data = chargeSuccessData.safeParse(envelope.data);
      if (!data.success) return 'invalid_charge';
      const payment = { reference: data.data.reference, paidKobo: BigInt(data.data.amount) };
      const outcome = await creditTopup(deps, trx, { ...payment, source: 'webhook' });
      // No top-up intent: a bank transfer into a dedicated account, when it is one of ours.
      if (outcome !== 'unknown_reference') return outcome;
      const dedicated = dedicatedPaymentOf(payment, envelope.data);
      return dedicated === null ? 'unknown_reference' : creditDedicatedTransfer(deps, trx, dedicated);
    }

    async function onTransferEvent(end: TransferEnd, raw: unknown): Promise<EventOutcome> {
      const data = transferData.safeParse(raw);
      if (!data.success) return 'invalid_transfer';
      const { reference, amount, reason, gateway_response } = data.data;
      const outcome = await applyTransferOutcome(deps, trx, {
        reference,
        end,
        // Paystack's `reason` is the narration we sent; why it failed is `gateway_response`.
        reason: gateway_response ?? reason ?? null,
        ...(amount === undefined ? {} : { amountKobo: BigInt(amount) }),
      });
      switch (outcome) {
        case 'settled':
          return 'transfer_settled';
        case 'failed':
          return 'transfer_failed';
        case 'reversed':
          return 'transfer_reversed';
        case 'unchanged':
          return 'transfer_unchanged';
        case 'conflict':
          return 'transfer_conflict';
        case 'unknown_reference':
          return 'unknown_reference';
        default: {
          const unreachable: never = outcome;
          throw new Error(`unknown transfer outcome ${String(unreachable)}`);
        }
      }
    }
  });
}
