import type { Kysely } from 'kysely';

// Tier 1 face checks (issue 25 item 7): getKycLivenessUrl starts one for the caller with a one-time
// state (kept only as its SHA-256), which the provider's page hands back with its liveness token.
// submitKycTier1 takes a widget's token only with the state of a check the caller started, unused
// (used_at) and unexpired, and each token once: token_hash is unique, so a token accepted for one
// check is refused for every other, whoever submits it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('kyc_liveness_checks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('state_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('token_hash', 'text', (c) => c.unique())
    .execute();
  await db.schema
    .createIndex('kyc_liveness_checks_user_idx')
    .on('kyc_liveness_checks')
    .columns(['user_id', 'expires_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('kyc_liveness_checks').execute();
}
