import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { isPending, type PendingCredit, writeCredits } from './credits.ts';
import { decideDedicatedCredit, dedicatedPaymentOf, lockDedicatedAccounts } from './dedicated-accounts.ts';
import { applyFloatTopUpOutcome, type FloatTopUpEnd } from './float-top-ups.ts';
import { decideTopupCredit, type FundingDeps } from './service.ts';
import { holdsUnstorableText } from './webhook.ts';

// The payment provider's signed webhooks, the acting half (SPEC.md "Events"). Every stored event
// that is not processed yet is processed once: the row is locked and marked processed in the
// transaction that acts on it, and crediting is keyed on the reference, so a redelivery, a replay
// or a verification racing the webhook changes nothing.
//
// The storing process drains the inbox right after each commit (createPaymentEventDrainer), so a
// wallet is credited within milliseconds of the 200; under load one transaction processes a whole
// batch of events, so crediting keeps up with storing. A job every minute sweeps whatever a crashed
// process left behind.

export const paymentWebhookSweepJob = defineJob('payments.webhook-sweep', noPayload);

type Deps = Pick<FundingDeps, 'db' | 'clock' | 'jobs' | 'raiseAlert' | 'limits' | 'ledgerShards'>;

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

/**
 * The provider's transfer.* events, which speak of its transfers (its word, kept at its edge), are
 * news of our float top-ups, the only transfers this service asks it for: here they become a
 * top-up's end (decision 0038). A Map, not an object literal: an event named `constructor` or `__proto__` must find nothing, not
 * something inherited from Object.prototype.
 */
const transferEvents: ReadonlyMap<string, FloatTopUpEnd> = new Map([
  ['transfer.success', 'success'],
  ['transfer.failed', 'failed'],
  ['transfer.reversed', 'reversed'],
]);

const transferEndOf = (event: unknown): FloatTopUpEnd | undefined =>
  typeof event === 'string' ? transferEvents.get(event) : undefined;

export type EventOutcome =
  | 'credited'
  | 'already_credited'
  | 'unknown_reference'
  | 'ignored_event'
  | 'invalid_charge'
  | 'invalid_transfer'
  /**
   * What became of a transfer.* event: named after the provider's event, and stored in
   * payment_events.outcome, so these stay as they were before decision 0038.
   */
  | 'transfer_settled'
  | 'transfer_failed'
  | 'transfer_reversed'
  | 'transfer_unchanged'
  | 'transfer_conflict'
  | 'unparseable'
  /** Parsed, but holds text the database cannot take (holdsUnstorableText): never acted on. */
  | 'malformed';

type StoredBody = { id: string; body: string; body_encoding: 'utf8' | 'base64' };

/**
 * Processes a stored event once. Safe to run any number of times and concurrently: the event row is
 * locked (a run under way elsewhere is waited for), and an event already processed is left alone.
 * Returns the outcome, or null when the event was processed before (or does not exist).
 */
export async function processPaymentEvent(deps: Deps, eventId: string): Promise<EventOutcome | null> {
  return deps.db.transaction().execute(async (trx) => {
    const event = await trx
      .selectFrom('payment_events')
      .select(['id', 'body', 'body_encoding', 'processed_at'])
      .where('id', '=', eventId)
      .forUpdate()
      .executeTakeFirst();
    if (event === undefined || event.processed_at !== null) return null;
    const decided = [{ id: event.id, decision: await decide(deps, trx, event, readEnvelope(event), null) }];
    const processed = await finishDecided(deps, trx, decided);
    await markProcessed(deps, trx, processed);
    return processed[0]!.outcome;
  });
}

export type BatchResult = {
  /** Unprocessed events taken (those locked by another process are skipped, not counted). */
  picked: number;
  /** Of those, processed now. */
  processed: number;
};

/**
 * Processes up to batchMax unprocessed events, oldest first, in one transaction. Events another
 * process is working on are skipped. Transfer events are processed one by one after it (they lock
 * their float top-up before the ledger, the reverse of a batch of credits). When the batch fails, each
 * of its events is tried on its own, so one bad event cannot hold back the others.
 */
export async function processPendingPaymentEvents(
  deps: Deps,
  options: { batchMax: number; logger: Pick<Logger, 'error'> },
): Promise<BatchResult> {
  let picked: string[] = [];
  // Processed after the batch, each in its own transaction: transfer events, or every event of a
  // batch that failed.
  let oneByOne: string[] = [];
  let processed = 0;
  try {
    await deps.db.transaction().execute(async (trx) => {
      const events = await trx
        .selectFrom('payment_events')
        .select(['id', 'body', 'body_encoding', 'event', 'reference'])
        .where('processed_at', 'is', null)
        .orderBy('received_at')
        .limit(options.batchMax)
        .forUpdate()
        .skipLocked()
        .execute();
      picked = events.map((e) => e.id);
      const isTransfer = (e: { event: string | null }) => transferEndOf(e.event) !== undefined;
      oneByOne = events.filter(isTransfer).map((e) => e.id);
      const charges = events
        .filter((e) => !isTransfer(e))
        .map((event) => ({ event, envelope: readEnvelope(event) }));
      const successes = charges.filter(({ event }) => event.event === 'charge.success');
      const intents = await lockIntents(
        trx,
        successes.map(({ event }) => event.reference),
      );
      // The other charges may be bank transfers: their accounts locked next, in one order too.
      await lockDedicatedAccounts(
        trx,
        successes
          .filter(({ event }) => !intents.has(event.reference ?? ''))
          .map(({ envelope }) => (envelope === 'unparseable' ? undefined : envelope.data)),
      );
      const decided: Decided[] = [];
      for (const { event, envelope } of charges)
        decided.push({ id: event.id, decision: await decide(deps, trx, event, envelope, intents) });
      const outcomes = await finishDecided(deps, trx, decided);
      await markProcessed(deps, trx, outcomes);
      processed = outcomes.length;
    });
  } catch (error) {
    options.logger.error(
      { err: error, events: picked.length },
      'payment event batch failed; processing one by one',
    );
    oneByOne = picked;
    processed = 0;
  }
  for (const id of oneByOne) {
    try {
      if ((await processPaymentEvent(deps, id)) !== null) processed += 1;
    } catch (error) {
      // Left unprocessed: the next drain or sweep tries it again.
      options.logger.error({ err: error, eventId: id }, 'payment event processing failed');
    }
  }
  return { picked: picked.length, processed };
}

/**
 * Locks the top-up intents of a batch's references in one order, before any ledger row: a
 * verifyTopup locks its intent before the ledger too, so the two wait on each other instead of
 * deadlocking. Returns the references that are intents.
 */
async function lockIntents(
  trx: Transaction<DB>,
  references: (string | null)[],
): Promise<ReadonlySet<string>> {
  const wanted = [...new Set(references.filter((r): r is string => r !== null))].sort();
  if (wanted.length === 0) return new Set();
  const rows = await trx
    .selectFrom('topup_intents')
    .select('reference')
    .where('reference', 'in', wanted)
    .orderBy('reference')
    .forUpdate()
    .execute();
  return new Set(rows.map((r) => r.reference));
}

/** Marks events processed with their outcomes: one statement per distinct outcome. */
async function markProcessed(
  deps: Pick<Deps, 'clock'>,
  trx: Transaction<DB>,
  outcomes: { id: string; outcome: EventOutcome }[],
): Promise<void> {
  const now = deps.clock.now();
  const byOutcome = Map.groupBy(outcomes, (o) => o.outcome);
  for (const [outcome, events] of byOutcome) {
    await trx
      .updateTable('payment_events')
      .set({ processed_at: now, outcome })
      .where(
        'id',
        'in',
        events.map((e) => e.id),
      )
      .execute();
  }
}

/** What a stored event does: done with an outcome, or a credit whose posting is still to write. */
type EventDecision = EventOutcome | PendingCredit;

type Decided = { id: string; decision: EventDecision };

/**
 * The outcomes of decided events: the credits among them written together (credits.ts), so that a
 * transaction crediting many wallets takes its ledger locks once, in the one order: a posting per
 * event would lock a wallet while holding the collections pool of the one before.
 */
async function finishDecided(
  deps: Pick<Deps, 'clock' | 'limits' | 'ledgerShards'>,
  trx: Transaction<DB>,
  decided: Decided[],
): Promise<{ id: string; outcome: EventOutcome }[]> {
  const credits = decided.flatMap(({ decision }) => (isPending(decision) ? [decision] : []));
  const credited = (
    await writeCredits(deps.limits, trx, credits, deps.clock.now(), { shards: deps.ledgerShards })
  ).values();
  return decided.map(({ id, decision }) => ({
    id,
    outcome: isPending(decision) ? credited.next().value! : decision,
  }));
}

type Envelope = { event?: unknown; data?: unknown };

/** A stored event's JSON object, read once: a batch locks by its data before deciding on it. */
function readEnvelope(event: StoredBody): Envelope | 'unparseable' {
  try {
    const envelope: unknown = JSON.parse(event.body_encoding === 'utf8' ? event.body : '');
    return typeof envelope === 'object' && envelope !== null ? envelope : 'unparseable';
  } catch {
    return 'unparseable';
  }
}

/**
 * What a stored event does, inside the caller's transaction. `lockedIntents`, when given, are the
 * references known to be top-up intents (locked by the caller): another reference skips the look-up.
 */
async function decide(
  deps: Deps,
  trx: Transaction<DB>,
  event: StoredBody,
  envelope: Envelope | 'unparseable',
  lockedIntents: ReadonlySet<string> | null,
): Promise<EventDecision> {
  if (envelope === 'unparseable') return 'unparseable';
  // The inbox closes these at the door; an event stored before it did is closed here.
  if (holdsUnstorableText(event.body, envelope)) return 'malformed';
  const transferEnd = transferEndOf(envelope.event);
  if (transferEnd !== undefined && typeof envelope.event === 'string') {
    const transferEvent = { eventId: event.id, name: envelope.event, end: transferEnd };
    return onTransferEvent(deps, trx, transferEvent, envelope.data);
  }
  if (envelope.event !== 'charge.success') return 'ignored_event';
  const data = chargeSuccessData.safeParse(envelope.data);
  if (!data.success) return 'invalid_charge';
  const payment = { reference: data.data.reference, paidKobo: BigInt(data.data.amount) };
  const isIntent = lockedIntents?.has(payment.reference) ?? true;
  const topup = isIntent
    ? await decideTopupCredit(deps, trx, { ...payment, source: 'webhook' })
    : 'unknown_reference';
  // No top-up intent: a bank transfer into a dedicated account, when it is one of ours.
  if (topup !== 'unknown_reference') return topup;
  const dedicated = dedicatedPaymentOf(payment, envelope.data);
  return dedicated === null ? 'unknown_reference' : decideDedicatedCredit(deps, trx, dedicated);
}

/** Webhook text quoted in an alert is cut to this length (whole characters: jsonb wants pairs whole). */
const quotedTextLengthMax = 200;

async function onTransferEvent(
  deps: Deps,
  trx: Transaction<DB>,
  event: { eventId: string; name: string; end: FloatTopUpEnd },
  raw: unknown,
): Promise<EventOutcome> {
  const data = transferData.safeParse(raw);
  if (!data.success) return 'invalid_transfer';
  const { reference, amount, reason, gateway_response } = data.data;
  // Paystack's `reason` is the narration we sent; why it failed is `gateway_response`.
  const why = gateway_response ?? reason ?? null;
  const outcome = await applyFloatTopUpOutcome(deps, trx, {
    reference,
    end: event.end,
    reason: why,
    ...(amount === undefined ? {} : { amountKobo: BigInt(amount) }),
  });
  if (outcome === 'unknown_reference') {
    // Every transfer this service makes is recorded before the provider hears of it, so signed news
    // of another one means the provider secret is used elsewhere too. Deliveries repeat, in other
    // bytes: one alert per reference and event kind.
    await deps.raiseAlert(
      trx,
      {
        kind: 'transfer_unknown_reference',
        message: `a signed ${event.name} arrived for transfer ${reference}, which this service never sent: the payment provider's secret may be in use elsewhere; nothing changed`,
        details: {
          event: event.name,
          reference,
          amountKobo: amount === undefined ? null : String(amount),
          reason: why === null ? null : why.slice(0, quotedTextLengthMax).toWellFormed(),
          paymentEventId: event.eventId,
        },
        dedupeKey: `transfer_unknown_reference:${event.name}:${reference}`,
      },
      deps.clock.now(),
      deps.jobs,
    );
  }
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

export type PaymentEventDrainer = {
  /** Something was stored: drain soon (now, or after the drain under way). Never throws. */
  kick(): void;
  /** Drains until nothing this process can take is left; waits for a drain under way first. */
  drainNow(): Promise<void>;
};

/**
 * One drain at a time per process: kicks during a drain make it go round once more, so a burst of
 * deliveries is processed in batches by one loop rather than by a run per delivery.
 */
export function createPaymentEventDrainer(
  deps: Deps,
  options: { batchMax: number; logger: Pick<Logger, 'error'> },
): PaymentEventDrainer {
  let running: Promise<void> | null = null;
  let again = false;

  async function drain(): Promise<void> {
    do {
      again = false;
      for (;;) {
        const { picked, processed } = await processPendingPaymentEvents(deps, options);
        // Done when the inbox had less than a batch, or nothing could be processed (it waits for
        // the sweep rather than spin on events that keep failing).
        if (picked < options.batchMax || processed === 0) break;
      }
    } while (again);
  }

  const start = (): Promise<void> => {
    if (running !== null) {
      again = true;
      return running;
    }
    running = drain()
      .catch((error: unknown) => options.logger.error({ err: error }, 'payment event drain failed'))
      .finally(() => {
        running = null;
      });
    return running;
  };

  return {
    kick: () => void start(),
    drainNow: async () => {
      // A drain under way may have passed events stored before this call: go round once more.
      await start();
    },
  };
}
