import { sql } from 'kysely';
import {
  type DomainEvent,
  type DomainEventJob,
  type DomainEventType,
  dispatchEventJob,
  type EventOf,
  JOB_DOMAIN_EVENT,
} from '../../src/events/domain-events.ts';
import type { World } from './world.ts';

// Domain events as the tests see them: published (the jobs in the queue, whatever their state), and
// run (fetched from the queue as a worker would, dispatched to the subscribers, completed). Tests
// run the worker's part themselves so that they know when it is done, without waiting on a poll.

const eventsOf = (job: DomainEventJob): DomainEvent[] => ('events' in job ? job.events : [job]);

/** Every event of this type ever published in this world's database, oldest first. */
export async function publishedEvents<T extends DomainEventType>(
  world: World,
  type: T,
): Promise<EventOf<T>[]> {
  const { rows } = await sql<{ data: DomainEventJob }>`
    select data from pgboss.job where name = ${JOB_DOMAIN_EVENT} order by created_on, id`.execute(
    world.ctx.db,
  );
  return rows.flatMap((row) => eventsOf(row.data)).filter((e): e is EventOf<T> => e.type === type);
}

/** Runs every queued domain-event job once, as the worker would; answers the events it ran. */
export async function runDomainEvents(world: World): Promise<DomainEvent[]> {
  const { boss } = world.ctx.jobs;
  const ran: DomainEvent[] = [];
  for (;;) {
    const jobs = await boss.fetch<DomainEventJob>(JOB_DOMAIN_EVENT, { batchSize: 100 });
    if (jobs.length === 0) return ran;
    for (const job of jobs) {
      await dispatchEventJob(world.ctx.events, job.data);
      ran.push(...eventsOf(job.data));
    }
    await boss.complete(
      JOB_DOMAIN_EVENT,
      jobs.map((job) => job.id),
    );
  }
}

/**
 * Runs every queued job of this name once through its definition's handler, as a worker would:
 * completed when it succeeds, failed (pg-boss then retries it later, with backoff) when it throws.
 * Answers the data of the jobs that succeeded and of those that failed.
 */
export async function runQueuedJobs(
  world: World,
  name: string,
): Promise<{ done: unknown[]; failed: Array<{ data: unknown; error: unknown }> }> {
  const { boss } = world.ctx.jobs;
  const done: unknown[] = [];
  const failed: Array<{ data: unknown; error: unknown }> = [];
  for (;;) {
    const jobs = await boss.fetch<object>(name, { batchSize: 100 });
    if (jobs.length === 0) return { done, failed };
    for (const job of jobs) {
      try {
        await world.ctx.jobs.runNow(name, job.data);
        await boss.complete(name, job.id);
        done.push(job.data);
      } catch (error) {
        await boss.fail(name, job.id, { message: String(error) });
        failed.push({ data: job.data, error });
      }
    }
  }
}
