import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type BatcherOptions, type Batching, fulfilled } from '../db/batching.ts';
import { newId } from '../ids.ts';
import type { FundingDeps } from './service.ts';

// The payment provider's signed webhooks (SPEC.md "Inbound webhook endpoint", "Authentication" 5,
// "Events"), the receiving half. The route (http/payment-webhook-route.ts) checks the signature over
// the raw bytes, stores the event (a batch of concurrent deliveries in one INSERT) and answers 200.
// An event stored and not yet processed is the durable record that it must be: webhook-processing.ts
// drains those right after the commit and, as a safety net, from a job every minute.

/** The largest webhook body accepted; Paystack's events are a few KiB. */
export const webhookBodyLimitBytes = 256 * 1024;

/** Stored event and reference names are cut to this length (they are for look-ups, not evidence). */
const storedNameLengthMax = 200;

const signaturePattern = /^[0-9a-f]{128}$/;

/**
 * True when the request carries at least one signature and every one it carries is the lowercase
 * hex HMAC-SHA-512 of the raw body under the secret: the provider may send it under more than one
 * header name, and a request whose headers disagree is refused rather than judged by the one that
 * suits it. A header given twice arrives joined into one string (or as a list), which is no
 * signature. Each comparison is constant-time over equal lengths; the format check before it looks
 * only at the header, never at the secret.
 */
export function signaturesValid(rawBody: Buffer, headers: readonly unknown[], secret: string): boolean {
  const given = headers.filter((h) => h !== undefined);
  if (given.length === 0) return false;
  const expected = Buffer.from(createHmac('sha512', secret).update(rawBody).digest('hex'), 'utf8');
  return given.every((header) => {
    if (typeof header !== 'string' || !signaturePattern.test(header)) return false;
    const bytes = Buffer.from(header, 'utf8');
    return bytes.length === expected.length && timingSafeEqual(bytes, expected);
  });
}

/**
 * What a body says for look-ups, and why it is closed at once when it is: `unparseable` (not a JSON
 * object, or not UTF-8 without NUL), `malformed` (a JSON object holding text the database cannot
 * take), or null when it is to be processed.
 */
type Parsed = {
  event: string | null;
  reference: string | null;
  closedAs: 'unparseable' | 'malformed' | null;
};

/**
 * NUL, which PostgreSQL text refuses, and half of a surrogate pair, which its jsonb refuses. In a
 * body that is UTF-8 without NUL (utf8Text) both can only come from a JSON escape (`\u0000`,
 * `\ud800`), so a body without such an escape is cleared without looking at what it parsed into.
 */
const unstorableEscape = /\\u(?:0000|d[89a-f])/i;
const unstorable = (text: string): boolean => text.includes('\u0000') || !text.isWellFormed();

/**
 * True when a parsed body holds, in any value or key however deep, a string the database cannot
 * take. Such a body is never processed: any of its strings might end up in a column, a look-up, an
 * alert's details or a job's data, and a statement that fails on it would fail on every retry, so
 * the event would never close. The provider never sends one; a top-up it hides is still credited
 * once by reconciliation, which asks the provider. Walks with a stack of its own, for a body may
 * nest as deep as its 256 KiB allow.
 */
export function holdsUnstorableText(text: string, parsed: unknown): boolean {
  if (!unstorableEscape.test(text)) return false;
  const pending: unknown[] = [parsed];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (unstorable(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (unstorable(key)) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

/** A name for the event and reference columns: cut short, and always text PostgreSQL takes. */
const storedName = (value: unknown): string | null =>
  typeof value === 'string' && value !== ''
    ? value.slice(0, storedNameLengthMax).replaceAll('\u0000', '\ufffd').toWellFormed()
    : null;

function parseEnvelope(text: string | null): Parsed {
  const unparseable: Parsed = { event: null, reference: null, closedAs: 'unparseable' };
  if (text === null) return unparseable;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return unparseable;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return unparseable;
  const envelope = value as { event?: unknown; data?: unknown };
  const data = envelope.data as { reference?: unknown } | null | undefined;
  return {
    event: storedName(envelope.event),
    reference: typeof data === 'object' && data !== null ? storedName(data.reference) : null,
    closedAs: holdsUnstorableText(text, value) ? 'malformed' : null,
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
  /** False when there is nothing to process (unparseable, malformed, or processed already). */
  needsProcessing: boolean;
};

type StoreDeps = Pick<FundingDeps, 'db' | 'clock'>;

/**
 * Stores signature-checked bodies once per distinct bytes, in one INSERT (one commit), answering for
 * each body in order. The same bytes twice in one batch are one event: the first is `created`. A
 * stored event not processed yet is its own durable to-do: the inbox is the queue
 * (webhook-processing.ts drains it).
 */
export async function storePaymentEvents(deps: StoreDeps, rawBodies: Buffer[]): Promise<StoredEvent[]> {
  const now = deps.clock.now();
  const bodies = rawBodies.map((raw) => {
    const text = utf8Text(raw);
    return { raw, text, sha256: createHash('sha256').update(raw).digest('hex'), parsed: parseEnvelope(text) };
  });
  const distinct = [...new Map(bodies.map((b) => [b.sha256, b])).values()];
  // One statement, so no transaction around it: it commits alone, and a concurrent delivery of the
  // same bytes waits on ours, then stores nothing.
  const inserted = await deps.db
    .insertInto('payment_events')
    .values(
      distinct.map(({ raw, text, sha256, parsed }) => ({
        id: newId(),
        received_at: now,
        body: text ?? raw.toString('base64'),
        body_encoding: text === null ? ('base64' as const) : ('utf8' as const),
        body_sha256: sha256,
        event: parsed.event,
        reference: parsed.reference,
        // An unparseable or malformed body has nothing to act on: it is kept as evidence (its
        // escapes are plain text here) and closed at once.
        processed_at: parsed.closedAs === null ? null : now,
        outcome: parsed.closedAs,
      })),
    )
    .onConflict((oc) => oc.column('body_sha256').doNothing())
    .returning(['id', 'body_sha256', 'processed_at'])
    .execute();
  const created = new Map(inserted.map((row) => [row.body_sha256, row]));
  // Redeliveries: the first delivery committed before our INSERT saw the conflict, so it is visible.
  const redelivered = distinct.filter((b) => !created.has(b.sha256)).map((b) => b.sha256);
  const existing =
    redelivered.length === 0
      ? new Map<string, { id: string; processed_at: Date | null }>()
      : new Map(
          (
            await deps.db
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
    if (row === undefined) throw new Error('a stored payment event vanished');
    return { eventId: row.id, created: false, needsProcessing: first && row.processed_at === null };
  });
}

/**
 * Gathers the webhook bodies that arrive while a batch is being stored into the next batch, so that
 * under load many deliveries share one statement (group commit) and at rest each is stored at
 * once. Every delivery is answered only after the batch holding it committed: nothing is
 * acknowledged before it is durable. One batch is stored at a time per process.
 */
export function createPaymentEventInbox(
  deps: StoreDeps,
  batching: Batching,
  options: Pick<BatcherOptions, 'batchMax'>,
): { store(rawBody: Buffer): Promise<StoredEvent>; drained(): Promise<void> } {
  const batcher = batching.batcher<Buffer, StoredEvent>(
    async (bodies) => (await storePaymentEvents(deps, bodies)).map(fulfilled),
    options,
  );
  return { store: (raw) => batcher.add(raw), drained: () => batcher.drained() };
}
