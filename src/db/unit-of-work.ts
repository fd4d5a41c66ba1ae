import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

// A unit of work: a transaction, and the writes that must commit with it because they report what
// it did. The Idempotency-Key's stored answer is the first of them: written by the transaction that
// moves the money, it can never say "done" for a change that rolled back, nor be missing for one
// that committed (a crash between two commits would leave the key running, and a retry with it,
// once the key is stale, would do the work again).
//
// Whoever asks for such a write (the router, for a POST's key) hands the operation a `WithCommit`;
// the domain runs its transaction through `inUnitOfWork`, or, where one transaction commits many
// results (the purchases' group commit), calls `writeWithCommit` with the writes of all of them.
// Domains know nothing of what the write is.

/** Rows that one writer puts into the transaction together (one statement for the lot). */
export type CommitWriter<Row> = (trx: Transaction<DB>, rows: Row[]) => Promise<void>;

/** One row for a writer, to write in the transaction that commits the result it reports. */
export type CommitWrite = { writer: CommitWriter<never>; row: unknown };

export type WithCommit = {
  /** The write that reports this result; written by the transaction that commits the result. */
  writeFor(result: unknown): CommitWrite;
  /** The transaction that held the write has committed. */
  committed(): void;
};

/** Writes the given writes inside the transaction: one call per writer, with all its rows. */
export async function writeWithCommit(trx: Transaction<DB>, writes: CommitWrite[]): Promise<void> {
  const byWriter = Map.groupBy(writes, (write) => write.writer);
  for (const [writer, rows] of byWriter) {
    await (writer as CommitWriter<unknown>)(
      trx,
      rows.map((write) => write.row),
    );
  }
}

/**
 * Runs the work in a transaction that also writes what `withCommit` asks for its result, and tells
 * it once committed. The plain transaction of an operation that moves money (a lock, a transfer).
 */
export async function inUnitOfWork<T>(
  db: Kysely<DB>,
  withCommit: WithCommit | undefined,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const result = await db.transaction().execute(async (trx) => {
    const done = await work(trx);
    if (withCommit !== undefined) await writeWithCommit(trx, [withCommit.writeFor(done)]);
    return done;
  });
  withCommit?.committed();
  return result;
}
