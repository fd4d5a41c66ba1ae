import { z } from 'zod';

// A job is declared once, in the domain that handles it, beside its handler: its queue's name and the
// zod schema of its payload. Producers enqueue through the declaration (jobs.send and jobs.insert are
// typed by the schema's input), and the worker parses every payload with it before the handler sees
// it (jobs/queue.ts): a payload that does not parse fails its job for good, with one log line, and
// never reaches the handler.

/** A job's queue name and the schema of its payload. */
export type Job<Schema extends z.ZodType = z.ZodType> = {
  readonly name: string;
  readonly payload: Schema;
};

/** The payload a producer hands over (the schema's input). */
export type JobInput<Schema extends z.ZodType> = z.input<Schema>;

/** The payload the handler receives, parsed (the schema's output). */
export type JobData<Schema extends z.ZodType> = z.output<Schema>;

export function defineJob<Schema extends z.ZodType>(name: string, payload: Schema): Job<Schema> {
  return { name, payload };
}

/**
 * The payload of work that carries none (what a cron schedule or the sandbox clock starts): an empty
 * object, and anything in it is dropped.
 */
export const noPayload = z.object({});
