import type {
  BatchSubscriber,
  DomainEvent,
  DomainEventType,
  EventOf,
  Subscriber,
} from './events/domain-events.ts';
import type { JobDefinition } from './jobs/queue.ts';
import type { AnyOperation } from './operation.ts';

// The shape every domain folder gives the composition root (DESIGN.md "Layout"): its module.ts
// exports one factory, `createXModule(deps: XModuleDeps)`, built from the deps that domain declares
// (the database, the clock, the adapters it uses, the functions of other modules it calls), and
// returns a DomainModule, plus an `api` of the functions other modules may call. Handlers, jobs
// and subscribers close over the module's deps; none sees the whole context.

/**
 * One domain event a module reacts to, and its idempotent reaction (it may run more than once):
 * one event at a time (`handle`), or all of a job's events it takes at once (`handleBatch`, onBatch).
 */
export type Subscription =
  | { event: DomainEventType; handle: (event: DomainEvent) => Promise<void> }
  | { event: DomainEventType; handleBatch: BatchSubscriber };

export type DomainModule = {
  /** The contract's operations this domain serves (the router gives them auth, idempotency, ...). */
  operations: readonly AnyOperation[];
  /** Its background jobs, with their schedules; jobs/queue.ts registers them with pg-boss. */
  jobs: readonly JobDefinition[];
  /** Its reactions to other domains' events; they run in the domain-event job. */
  subscribers: readonly Subscription[];
};

/** A subscription with its event type checked against the reaction's parameter. */
export function on<T extends DomainEventType>(event: T, handle: Subscriber<T>): Subscription {
  // The bus hands a subscription only events of its own type (events/domain-events.ts).
  return { event, handle: handle as (event: DomainEvent) => Promise<void> };
}

/**
 * One reaction to several event types that takes a job's events at once: the bus hands it every
 * event of these types in the job in one call (a settled batch of purchases, say), so that it can
 * write them with one statement in one transaction.
 */
export function onBatch<T extends DomainEventType>(
  events: readonly T[],
  handleBatch: (events: EventOf<T>[]) => Promise<void>,
): Subscription[] {
  // The bus hands a batch subscription only events of the types it subscribed to.
  return events.map((event) => ({ event, handleBatch: handleBatch as BatchSubscriber }));
}

/** A module with nothing of a kind: spread it and give only what the domain has. */
export const emptyModule: DomainModule = { operations: [], jobs: [], subscribers: [] };
