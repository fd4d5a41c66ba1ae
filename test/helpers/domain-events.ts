import { sql } from 'kysely';
import type { z } from 'zod';
import {
  type DomainEvent,
  type DomainEventJob,
  type DomainEventType,
  dispatchEventJob,
  domainEventJob,
  type EventOf,
} from '../../src/events/domain-events.ts';
import type { Job } from '../../src/jobs/job.ts';
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
    select data from pgboss.job where name = ${domainEventJob.name} order by created_on, id`.execute(
    world.ctx.db,
  );
  return rows.flatMap((row) => eventsOf(row.data)).filter((e): e is EventOf<T> => e.type === type);
}

/** Runs every queued domain-event job once, as the worker would; answers the events it ran. */
export async function runDomainEvents(world: World): Promise<DomainEvent[]> {
  const { boss } = world.ctx.jobs;
  const ran: DomainEvent[] = [];
  for (;;) {
    const jobs = await boss.fetch<unknown>(domainEventJob.name, { batchSize: 100 });
    if (jobs.length === 0) return ran;
    for (const job of jobs) {
      // Parsed as the worker parses it: an event that does not match its schema fails the test here.
      const data = domainEventJob.payload.parse(job.data);
      await dispatchEventJob(world.ctx.events, data);
      ran.push(...eventsOf(data));
    }
    await boss.complete(
      domainEventJob.name,
      jobs.map((job) => job.id),
    );
  }
}

/**
 * Runs every queued job of this name once through its definition's handler, as a worker would:
 * completed when it succeeds, failed (pg-boss then retries it later, with backoff) when it throws.
 * Answers the data of the jobs that succeeded and of those that failed.
 */
export async function runQueuedJobs<Payload extends object>(
  world: World,
  declared: Job<z.ZodType<unknown, Payload>>,
): Promise<{ done: Payload[]; failed: Array<{ data: Payload; error: unknown }> }> {
  const { boss } = world.ctx.jobs;
  const { name } = declared;
  const done: Payload[] = [];
  const failed: Array<{ data: Payload; error: unknown }> = [];
  for (;;) {
    const jobs = await boss.fetch<Payload>(name, { batchSize: 100 });
    if (jobs.length === 0) return { done, failed };
    for (const job of jobs) {
      try {
        // As the worker does, parsed by the job's schema (an unparsable payload throws here).
        await world.ctx.jobs.runNow(declared, job.data);
        await boss.complete(name, job.id);
        done.push(job.data);
      } catch (error) {
        await boss.fail(name, job.id, { message: String(error) });
        failed.push({ data: job.data, error });
      }
    }
  }
}
