import type { Kysely } from 'kysely';

// Transactional email goes only to a verified address (API.md section 10): an address set by
// updateProfile is unverified until the 6-digit code emailed to it comes back (verifyEmail). Codes
// are kept as HMACs, like SMS codes. Each user can switch email and push off per notification kind;
// no row means everything on.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'timestamptz').execute();
  await db.schema
    .createTable('email_verifications')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('notification_settings')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    // {<kind>: false} for each kind switched off; a kind absent is on.
    .addColumn('email', 'jsonb', (c) => c.notNull())
    .addColumn('push', 'jsonb', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('notification_settings').execute();
  await db.schema.dropTable('email_verifications').execute();
  await db.schema.alterTable('users').dropColumn('email_verified_at').execute();
}
