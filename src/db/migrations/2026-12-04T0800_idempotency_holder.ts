import type { Kysely } from 'kysely';

// Which request holds an in-progress Idempotency-Key: a random id written when the key is taken, so
// that a release the database did not hear (it was out of reach) can be sent again later and still
// remove only that request's own hold, never the hold of a retry that has taken the key since.
// Null on keys taken before this column (released by key alone, as they were).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('holder', 'uuid').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('holder').execute();
}
