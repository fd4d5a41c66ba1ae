import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { JobDefinition, JobQueue } from '../jobs/queue.ts';

// Domain events: facts one domain states and others react to (the referral bonus reacts to Tier 1
// approval, notifications to KYC decisions, ...). They are internal only: the service emits no
// outbound events (SPEC.md "Events"). An event is enqueued as a job inside the transaction that
// made it true, so it exists exactly when the change committed, and subscribers run in a worker.
// A job may run more than once, so every subscriber must be idempotent. The events of one group
// commit (a batch of purchases settled together) share one job, so that a purchase does not cost a
// job row of its own to insert, fetch, complete and purge.

export type DomainEvent =
  /** The transaction PIN was changed (not first set): security mail, always sent. */
  | { type: 'auth.pin_changed'; userId: string; occurredAt: string }
  /** A sign-in from a device (browser) this user had not signed in from before. */
  | {
      type: 'auth.new_device_sign_in';
      userId: string;
      signInId: string;
      device: string;
      ip: string;
      occurredAt: string;
    }
  | { type: 'kyc.tier_approved'; userId: string; tier: number; occurredAt: string }
  | { type: 'kyc.tier_rejected'; userId: string; tier: number; reason: string; occurredAt: string }
  /** A top-up was credited to the wallet (once per reference); amountKobo is a decimal string. */
  | {
      type: 'funding.topup_credited';
      userId: string;
      reference: string;
      amountKobo: string;
      occurredAt: string;
    }
  /** A bank transfer into a user's dedicated account was credited (once per charge reference). */
  | {
      type: 'funding.transfer_credited';
      userId: string;
      reference: string;
      accountNumber: string;
      amountKobo: string;
      occurredAt: string;
    }
  /** An outbound transfer topping up a VTU provider's float settled (once per transfer reference). */
  | {
      type: 'funding.transfer_settled';
      reference: string;
      provider: string;
      amountKobo: string;
      occurredAt: string;
    }
  /** An outbound transfer topping up a VTU provider's float failed (or was reversed before it settled). */
  | {
      type: 'funding.transfer_failed';
      reference: string;
      provider: string;
      amountKobo: string;
      reason: string;
      occurredAt: string;
    }
  /** A purchase was delivered, or an airtime-to-cash sale credited (once per purchase). */
  | {
      type: 'vtu.purchase_succeeded';
      userId: string;
      transactionId: string;
      reference: string;
      service: string;
      amountKobo: string;
      /** Delivered in part: what went back to the wallet. */
      refundedKobo?: string;
      /** What the buyer keeps, when it came with the answer: a prepaid meter's token and units, exam pins. */
      token?: string;
      units?: string;
      pins?: string[];
      /** The token or pins did not come with the answer: vtu.delivery_arrived follows when they do. */
      deliveryAwaited?: true;
      occurredAt: string;
    }
  /**
   * The token or pins of a purchase that succeeded without them arrived on a later requery (once per
   * purchase). No money moves: the purchase was settled when it succeeded.
   */
  | {
      type: 'vtu.delivery_arrived';
      userId: string;
      transactionId: string;
      reference: string;
      service: string;
      token?: string;
      units?: string;
      pins?: string[];
      occurredAt: string;
    }
  /** A purchase failed at the provider and its amount went back to the wallet (once per purchase). */
  | {
      type: 'vtu.purchase_failed';
      userId: string;
      transactionId: string;
      reference: string;
      service: string;
      amountKobo: string;
      reason: string;
      occurredAt: string;
    }
  /** Another user's wallet transfer reached this user's wallet (once per transfer). */
  | {
      type: 'wallet.transfer_received';
      userId: string;
      transferId: string;
      reference: string;
      /** The sender as the recipient may see them (`Adaeze O.`). */
      senderName: string;
      amountKobo: string;
      occurredAt: string;
    }
  /** A savings lock took amountKobo from the wallet (once per lock). */
  | {
      type: 'savings.lock_created';
      userId: string;
      lockId: string;
      amountKobo: string;
      days: number;
      maturesAt: string;
      occurredAt: string;
    }
  /** A lock reached maturity and its whole amount went back to the wallet (once per lock). */
  | { type: 'savings.lock_matured'; userId: string; lockId: string; amountKobo: string; occurredAt: string }
  /** A lock was broken early: refundedKobo to the wallet, penaltyKobo kept (once per lock). */
  | {
      type: 'savings.lock_broken';
      userId: string;
      lockId: string;
      refundedKobo: string;
      penaltyKobo: string;
      occurredAt: string;
    }
  /** An operator resolved a dispute: a refund of refundedKobo to the wallet, or a decline ("0"), once. */
  | {
      type: 'disputes.resolved';
      userId: string;
      disputeId: string;
      /** The disputed movement's reference. */
      reference: string;
      decision: 'refund' | 'decline';
      refundedKobo: string;
      /** The operator's words to the person. */
      resolution: string;
      occurredAt: string;
    }
  /** The daily check-in was claimed (once per user and Lagos day). */
  | {
      type: 'growth.checkin_claimed';
      userId: string;
      day: string;
      streak: number;
      rewardKobo: string;
      occurredAt: string;
    }
  /** The user's savings ever locked reached a milestone threshold (once per user and threshold). */
  | { type: 'growth.milestone_reached'; userId: string; thresholdKobo: string; occurredAt: string }
  /**
   * A scheduled run the wallet could not cover was skipped (once per schedule and due time);
   * `paused` when it was the last of SCHEDULE_SKIPS_MAX in a row and the schedule paused.
   */
  | {
      type: 'schedule.run_skipped';
      userId: string;
      scheduleId: string;
      service: string;
      dueAt: string;
      amountKobo: string;
      skipsInRow: number;
      paused: boolean;
      /** The schedule had no run after this one (a one-off, its last run, or past endsAt): it ended. */
      ended?: boolean;
      occurredAt: string;
    }
  /** A schedule paused itself at a run (a price above the tolerance, a plan gone, ...): once per due time. */
  | {
      type: 'schedule.paused';
      userId: string;
      scheduleId: string;
      service: string;
      dueAt: string;
      reason: string;
      occurredAt: string;
    }
  /** An invitee's Tier 1 was approved and the referrer's locked bonus grew (once per invitee). */
  | {
      type: 'growth.referral_qualified';
      userId: string;
      inviteeId: string;
      bonusKobo: string;
      occurredAt: string;
    };

export type DomainEventType = DomainEvent['type'];
export type EventOf<T extends DomainEventType> = Extract<DomainEvent, { type: T }>;
export type Subscriber<T extends DomainEventType> = (event: EventOf<T>) => Promise<void>;
/**
 * A reaction that takes many events at once: of one job, every event of the types it subscribed to,
 * in one call (the inbox writes a settled batch of purchases with one statement). It must be
 * idempotent for each event, as any subscriber.
 */
export type BatchSubscriber = (events: DomainEvent[]) => Promise<void>;

export const JOB_DOMAIN_EVENT = 'domain-event';

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
export type DomainEventJob = DomainEvent | { events: DomainEvent[] };

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
  await jobs.send(JOB_DOMAIN_EVENT, event, { db: trx });
}

/** Enqueues the events of the caller's transaction as one job (none when there are none). */
export async function publishEvents(
  jobs: JobQueue,
  trx: Transaction<DB>,
  events: DomainEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const data: DomainEventJob = { events };
  await jobs.send(JOB_DOMAIN_EVENT, data, { db: trx });
}

/**
 * The job that runs subscribers. They are idempotent, so a retry after a failure or a crash is safe,
 * also of a whole batch. Every top-up publishes one, every batch of settled purchases one: fetched 20
 * at a time, a burst costs a few queue queries rather than two per event.
 */
export function domainEventJob(bus: EventBus): JobDefinition {
  return {
    name: JOB_DOMAIN_EVENT,
    batchSize: 20,
    retryLimit: 10,
    retryDelaySeconds: 5,
    expireInSeconds: 300,
    handler: (data) => dispatchEventJob(bus, data as DomainEventJob),
    // The events of every job fetched, dispatched together: a burst of settled purchases reaches the
    // inbox as one batch (one transaction) rather than one per job.
    batchHandler: (data) => bus.dispatchJobs((data as DomainEventJob[]).map(eventsOf)),
  };
}
