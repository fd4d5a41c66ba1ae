import { type Kysely, sql } from 'kysely';

// An operations alert that must be raised once per cause carries a key naming the cause (a transfer
// event for a reference we never sent comes again and again, in other bytes, to processes working
// at once). The unique constraint makes a second insert of the key do nothing: on PostgreSQL a
// concurrent insert waits for the first transaction and then finds the key taken, where a look-up
// before the insert would let both through. Other alerts leave the key null, and nulls never clash.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ops_alerts add column dedupe_key text
    constraint ops_alerts_dedupe_key_unique unique`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ops_alerts drop column dedupe_key`.execute(db);
}
