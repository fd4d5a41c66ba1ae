import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { defineJob } from '../jobs/job.ts';
import { type JobDefinition, type JobQueue, jobDefinition } from '../jobs/queue.ts';

// Domain events: facts one domain states and others react to (the referral bonus reacts to Tier 1
// approval, notifications to KYC decisions, ...). They are internal only: the service emits no
// outbound events (SPEC.md "Events"). An event is enqueued as a job inside the transaction that
// made it true, so it exists exactly when the change committed, and subscribers run in a worker.
// A job may run more than once, so every subscriber must be idempotent. The events of one group
// commit (a batch of purchases settled together) share one job, so that a purchase does not cost a
// job row of its own to insert, fetch, complete and purge.

const text = z.string();
/** An amount in kobo as a decimal string (JSON has no bigint). */
const kobo = z.string();
/** When the fact became true, ISO 8601. */
const occurredAt = z.string();
/** What the buyer keeps, when it came with the answer: a prepaid meter's token and units, exam pins. */
const delivered = {
  token: text.exactOptional(),
  units: text.exactOptional(),
  pins: z.array(text).exactOptional(),
};

/** A bank deposit (a bank transfer into a user's dedicated account) was credited (once per charge reference). */
const bankDepositCredited = z.object({
  type: z.literal('funding.bank_deposit_credited'),
  userId: text,
  reference: text,
  accountNumber: text,
  amountKobo: kobo,
  occurredAt,
});
/** A float top-up of a VTU provider settled (once per top-up reference). */
const floatTopUpSettled = z.object({
  type: z.literal('funding.float_top_up_settled'),
  reference: text,
  provider: text,
  amountKobo: kobo,
  occurredAt,
});
/** A float top-up of a VTU provider failed (or was reversed before it settled). */
const floatTopUpFailed = z.object({
  type: z.literal('funding.float_top_up_failed'),
  reference: text,
  provider: text,
  amountKobo: kobo,
  reason: text,
  occurredAt,
});

/**
 * The events, each a zod object: the type is read from them, and the domain-event job parses its
 * payload with them (jobs/job.ts), so what a worker dispatches is what was published.
 */
const domainEventSchema = z.discriminatedUnion('type', [
  /** The transaction PIN was changed (not first set): security mail, always sent. */
  z.object({ type: z.literal('auth.pin_changed'), userId: text, occurredAt }),
  /** A sign-in from a device (browser) this user had not signed in from before. */
  z.object({
    type: z.literal('auth.new_device_sign_in'),
    userId: text,
    signInId: text,
    device: text,
    ip: text,
    occurredAt,
  }),
  /** An operator froze the account (no money leaves it at the person's request): security mail. */
  z.object({ type: z.literal('auth.account_frozen'), userId: text, occurredAt }),
  /** An operator unfroze the account: security mail. */
  z.object({ type: z.literal('auth.account_unfrozen'), userId: text, occurredAt }),
  /** Another administrator removed this administrator's TOTP and ended their sessions: security mail. */
  z.object({ type: z.literal('auth.second_factor_reset'), userId: text, occurredAt }),
  z.object({ type: z.literal('kyc.tier_approved'), userId: text, tier: z.number(), occurredAt }),
  z.object({
    type: z.literal('kyc.tier_rejected'),
    userId: text,
    tier: z.number(),
    reason: text,
    occurredAt,
  }),
  /** A top-up was credited to the wallet (once per reference). */
  z.object({
    type: z.literal('funding.topup_credited'),
    userId: text,
    reference: text,
    amountKobo: kobo,
    occurredAt,
  }),
  bankDepositCredited,
  floatTopUpSettled,
  floatTopUpFailed,
  /** A purchase was delivered, or an airtime-to-cash sale credited (once per purchase). */
  z.object({
    type: z.literal('vtu.purchase_succeeded'),
    userId: text,
    transactionId: text,
    reference: text,
    service: text,
    amountKobo: kobo,
    /** Delivered in part: what went back to the wallet. */
    refundedKobo: kobo.exactOptional(),
    ...delivered,
    /** The token or pins did not come with the answer: vtu.delivery_arrived follows when they do. */
    deliveryAwaited: z.literal(true).exactOptional(),
    occurredAt,
  }),
  /**
   * The token or pins of a purchase that succeeded without them arrived on a later requery (once per
   * purchase). No money moves: the purchase was settled when it succeeded.
   */
  z.object({
    type: z.literal('vtu.delivery_arrived'),
    userId: text,
    transactionId: text,
    reference: text,
    service: text,
    ...delivered,
    occurredAt,
  }),
  /** A purchase failed at the provider and its amount went back to the wallet (once per purchase). */
  z.object({
    type: z.literal('vtu.purchase_failed'),
    userId: text,
    transactionId: text,
    reference: text,
    service: text,
    amountKobo: kobo,
    reason: text,
    occurredAt,
  }),
  /** Another user's wallet transfer reached this user's wallet (once per transfer). */
  z.object({
    type: z.literal('wallet.transfer_received'),
    userId: text,
    transferId: text,
    reference: text,
    /** The sender as the recipient may see them (`Adaeze O.`). */
    senderName: text,
    amountKobo: kobo,
    occurredAt,
  }),
  /** A savings lock took amountKobo from the wallet (once per lock). */
  z.object({
    type: z.literal('savings.lock_created'),
    userId: text,
    lockId: text,
    amountKobo: kobo,
    days: z.number(),
    maturesAt: text,
    occurredAt,
  }),
  /** A lock reached maturity and its whole amount went back to the wallet (once per lock). */
  z.object({
    type: z.literal('savings.lock_matured'),
    userId: text,
    lockId: text,
    amountKobo: kobo,
    occurredAt,
  }),
  /** A lock was broken early: refundedKobo to the wallet, penaltyKobo kept (once per lock). */
  z.object({
    type: z.literal('savings.lock_broken'),
    userId: text,
    lockId: text,
    refundedKobo: kobo,
    penaltyKobo: kobo,
    occurredAt,
  }),
  /** An operator resolved a dispute: a refund of refundedKobo to the wallet, or a decline ("0"), once. */
  z.object({
    type: z.literal('disputes.resolved'),
    userId: text,
    disputeId: text,
    /** The disputed movement's reference. */
    reference: text,
    decision: z.enum(['refund', 'decline']),
    refundedKobo: kobo,
    /** The operator's words to the person. */
    resolution: text,
    occurredAt,
  }),
  /** Another operator approved an adjustment of the person's wallet: posted once (adjustments). */
  z.object({
    type: z.literal('adjustments.approved'),
    userId: text,
    adjustmentId: text,
    direction: z.enum(['credit', 'debit']),
    amountKobo: kobo,
    /** The proposer's reason, which the person reads. */
    reason: text,
    occurredAt,
  }),
  /** Part of a credit went to the person's held balance: over their tier's maximum (limits). */
  z.object({ type: z.literal('limits.balance_held'), userId: text, heldKobo: kobo, occurredAt }),
  /** Part or all of a held balance moved into the wallet: the tier rose or the balance fell (limits). */
  z.object({
    type: z.literal('limits.held_released'),
    userId: text,
    releasedKobo: kobo,
    stillHeldKobo: kobo,
    occurredAt,
  }),
  /** The person asked to close their account: it closes at effectiveAt unless cancelled (decision 0047). */
  z.object({
    type: z.literal('account_closure.requested'),
    userId: text,
    requestId: text,
    effectiveAt: text,
    occurredAt,
  }),
  /**
   * A request to close the account was cancelled: by the person, or by the service at the effective
   * time because `reasons` (requestAccountDeletion's) applied again, and the account stays open.
   */
  z.object({
    type: z.literal('account_closure.cancelled'),
    userId: text,
    requestId: text,
    by: z.enum(['person', 'service']),
    reasons: z.array(text),
    occurredAt,
  }),
  /** The daily check-in was claimed (once per user and Lagos day). */
  z.object({
    type: z.literal('growth.checkin_claimed'),
    userId: text,
    day: text,
    streak: z.number(),
    rewardKobo: kobo,
    occurredAt,
  }),
  /** The user's savings ever locked reached a milestone threshold (once per user and threshold). */
  z.object({ type: z.literal('growth.milestone_reached'), userId: text, thresholdKobo: kobo, occurredAt }),
  /**
   * A scheduled run the wallet could not cover was skipped (once per schedule and due time);
   * `paused` when it was the last of SCHEDULE_SKIPS_MAX in a row and the schedule paused.
   */
  z.object({
    type: z.literal('schedule.run_skipped'),
    userId: text,
    scheduleId: text,
    service: text,
    dueAt: text,
    amountKobo: kobo,
    skipsInRow: z.number(),
    paused: z.boolean(),
    /** The schedule had no run after this one (a one-off, its last run, or past endsAt): it ended. */
    ended: z.boolean().exactOptional(),
    /**
     * Why the run was not made when it was not the wallet (a frozen account): such a skip is not
     * counted toward SCHEDULE_SKIPS_MAX, and the schedule goes on.
     */
    reason: text.exactOptional(),
    occurredAt,
  }),
  /** A schedule paused itself at a run (a price above the tolerance, a plan gone, ...): once per due time. */
  z.object({
    type: z.literal('schedule.paused'),
    userId: text,
    scheduleId: text,
    service: text,
    dueAt: text,
    reason: text,
    occurredAt,
  }),
  /** An invitee's Tier 1 was approved and the referrer's locked bonus grew (once per invitee). */
  z.object({
    type: z.literal('growth.referral_qualified'),
    userId: text,
    inviteeId: text,
    bonusKobo: kobo,
    occurredAt,
  }),
  /** A copy of the person's data is ready to download until expiresAt (data-export; once per export). */
  z.object({
    type: z.literal('data_export.ready'),
    userId: text,
    exportId: text,
    expiresAt: text,
    occurredAt,
  }),
]);

export type DomainEvent = z.output<typeof domainEventSchema>;

export type DomainEventType = DomainEvent['type'];
export type EventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
export type Subscriber<T extends DomainEventType> = (event: EventOf<T>) => Promise<void>;
/**
 * A reaction that takes many events at once: of one job, every event of the types it subscribed to,
 * in one call (the inbox writes a settled batch of purchases with one statement). It must be
 * idempotent for each event, as any subscriber.
 */
export type BatchSubscriber = (events: DomainEvent[]) => Promise<void>;

/**
 * The events renamed when "transfer" came to mean a wallet-to-wallet transfer only (decision 0038),
 * under the names they had. A job enqueued before the deploy still carries the old name, and pg-boss
 * keeps it until a worker takes it (a retried one for minutes): it is read as the event it now is,
 * so the purchases waiting on a float top-up are still sent or refunded and the inbox still tells
 * of a bank deposit. Only parsing reads them; nothing publishes them. Remove them in the release after
 * the one that renamed them, when no job of the old names can be left.
 */
const renamedEventSchema = z.union([
  bankDepositCredited
    .extend({ type: z.literal('funding.transfer_credited') })
    .transform((event) => ({ ...event, type: 'funding.bank_deposit_credited' as const })),
  floatTopUpSettled
    .extend({ type: z.literal('funding.transfer_settled') })
    .transform((event) => ({ ...event, type: 'funding.float_top_up_settled' as const })),
  floatTopUpFailed
    .extend({ type: z.literal('funding.transfer_failed') })
    .transform((event) => ({ ...event, type: 'funding.float_top_up_failed' as const })),
]);

/** An event as a job carries it: under its name, or under the name it had before decision 0038. */
const storedEventSchema = z.union([domainEventSchema, renamedEventSchema]);

/**
 * The job that carries events to their subscribers: one event (publishEvent), or the events of one
 * transaction (publishEvents).
 */
export const domainEventJob = defineJob(
  'domain-event',
  z.union([storedEventSchema, z.object({ events: z.array(storedEventSchema) })]),
);

export type EventBus = {
  subscribe<T extends DomainEventType>(type: T, subscriber: Subscriber<T>): void;
  /** Subscribes a batch reaction to a type; one subscribed to several types gets them in one call. */
  subscribeBatch(type: DomainEventType, subscriber: BatchSubscriber): void;
  /** Runs every subscriber of the event's type, in subscription order (dispatchAll of this one event). */
  dispatch(event: DomainEvent): Promise<void>;
  /**
   * Runs the events of one job: each event's own subscribers, event by event, and alongside them
   * each batch subscriber once with all of the events it takes. A failure keeps no other from running; then
   * the first failure, or all of them, is thrown.
   */
  dispatchAll(events: readonly DomainEvent[]): Promise<void>;
  /**
   * Runs the events of several jobs fetched together: each job's events through their own
   * subscribers as dispatchAll does, the jobs side by side, and each batch subscriber once with the
   * events of them all.
   */
  dispatchJobs(jobs: ReadonlyArray<readonly DomainEvent[]>): Promise<void>;
};

/** The data of a domain-event job: one event (publishEvent), or the events of one transaction (publishEvents). */
export type DomainEventJob = z.output<typeof domainEventJob.payload>;

/**
 * The job handler: every event of the job, each to its subscribers. One event whose subscriber fails
 * does not keep the others from theirs; the job then fails and is retried whole (subscribers are
 * idempotent).
 */
export async function dispatchEventJob(bus: EventBus, job: DomainEventJob): Promise<void> {
  return bus.dispatchAll(eventsOf(job));
}

const eventsOf = (job: DomainEventJob): DomainEvent[] => ('events' in job ? job.events : [job]);

export function createEventBus(): EventBus {
  const subscribers = new Map<DomainEventType, Array<(event: DomainEvent) => Promise<void>>>();
  const batchSubscribers = new Map<DomainEventType, BatchSubscriber[]>();
  /** Each event's own subscribers, event by event, in the job's order. */
  const runSubscribers = async (events: readonly DomainEvent[], failures: unknown[]) => {
    for (const event of events) {
      try {
        for (const subscriber of subscribers.get(event.type) ?? []) await subscriber(event);
      } catch (error) {
        failures.push(error);
      }
    }
  };
  /** Each batch subscriber once, with its events in the jobs' order, however many types they are of. */
  const runBatchSubscribers = async (events: readonly DomainEvent[], failures: unknown[]) => {
    const batches = new Map<BatchSubscriber, DomainEvent[]>();
    for (const event of events) {
      for (const subscriber of batchSubscribers.get(event.type) ?? []) {
        const batch = batches.get(subscriber) ?? [];
        batch.push(event);
        batches.set(subscriber, batch);
      }
    }
    for (const [subscriber, batch] of batches) {
      await subscriber(batch).catch((error: unknown) => failures.push(error));
    }
  };
  // The jobs side by side, as the worker ran them before batch subscribers existed: a subscriber
  // that waits on a provider (a purchase sent when its float top-up settles) holds up its own job
  // only. The batch subscribers take every job's events in one call.
  const dispatchJobs = async (jobs: ReadonlyArray<readonly DomainEvent[]>) => {
    const failures: unknown[] = [];
    await Promise.all([
      ...jobs.map((events) => runSubscribers(events, failures)),
      runBatchSubscribers(jobs.flat(), failures),
    ]);
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} domain events failed`);
  };
  const dispatchAll = (events: readonly DomainEvent[]) => dispatchJobs([events]);
  return {
    subscribe(type, subscriber) {
      const list = subscribers.get(type) ?? [];
      list.push(subscriber as (event: DomainEvent) => Promise<void>);
      subscribers.set(type, list);
    },
    subscribeBatch(type, subscriber) {
      const list = batchSubscribers.get(type) ?? [];
      if (!list.includes(subscriber)) list.push(subscriber);
      batchSubscribers.set(type, list);
    },
    dispatch: (event) => dispatchAll([event]),
    dispatchAll,
    dispatchJobs,
  };
}

/** Enqueues the event in the caller's transaction. */
export async function publishEvent(
  jobs: JobQueue,
  trx: Transaction<DB> | Kysely<DB>,
  event: DomainEvent,
): Promise<void> {
  await jobs.send(domainEventJob, event, { db: trx });
}

/** Enqueues the events of the caller's transaction as one job (none when there are none). */
export async function publishEvents(
  jobs: JobQueue,
  trx: Transaction<DB>,
  events: DomainEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const data: DomainEventJob = { events };
  await jobs.send(domainEventJob, data, { db: trx });
}

/**
 * The job that runs subscribers. They are idempotent, so a retry after a failure or a crash is safe,
 * also of a whole batch. Every top-up publishes one, every batch of settled purchases one: fetched 20
 * at a time, a burst costs a few queue queries rather than two per event.
 */
export function domainEventDefinition(bus: EventBus): JobDefinition<typeof domainEventJob.payload> {
  return jobDefinition(domainEventJob, {
    batchSize: 20,
    retryLimit: 10,
    retryDelaySeconds: 5,
    expireInSeconds: 300,
    // Published in the money's transactions (a settlement's batch, a credit): a NOTIFY there would
    // serialise their commits on PostgreSQL's notification lock (decision 0036).
    wake: 'poll',
    handler: (job) => dispatchEventJob(bus, job),
    // The events of every job fetched, dispatched together: a burst of settled purchases reaches the
    // inbox as one batch (one transaction) rather than one per job.
    batchHandler: (jobs) => bus.dispatchJobs(jobs.map(eventsOf)),
  });
}
