import type { Kysely } from 'kysely';

// The devices (browsers, apps: told apart by their User-Agent) each user has signed in from, so
// that a sign-in from a new one sends security mail (API.md section 10). Only a hash is kept.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('known_devices')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('device_hash', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('known_devices_pk', ['user_id', 'device_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('known_devices').execute();
}
