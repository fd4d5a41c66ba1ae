import { type Kysely, sql } from 'kysely';

// Tiered KYC: one row per submission (a rejected tier may be submitted again, so a tier can have
// many rows, but at most one pending or approved), and the private identity documents.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('kyc_documents')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('storage_key', 'text', (c) => c.notNull().unique())
    .addColumn('document_type', 'text', (c) =>
      c.notNull().check(sql`document_type in ('passport', 'drivers_licence', 'voters_card', 'nin_slip')`),
    )
    .addColumn('mime_type', 'text', (c) =>
      c.notNull().check(sql`mime_type in ('image/jpeg', 'image/png', 'application/pdf')`),
    )
    .addColumn('size_bytes', 'integer', (c) => c.notNull().check(sql`size_bytes > 0`))
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('kyc_documents_user_idx').on('kyc_documents').column('user_id').execute();

  await db.schema
    .createTable('kyc_submissions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('tier', 'integer', (c) => c.notNull().check(sql`tier between 1 and 3`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'approved', 'rejected')`))
    .addColumn('reason', 'text')
    // What was checked, for the reviewer and the dedicated account (NIN name, bank account name);
    // never a whole NIN or account number in clear.
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('document_id', 'uuid', (c) => c.references('kyc_documents.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz')
    .addColumn('decided_by', 'uuid', (c) => c.references('users.id'))
    .execute();
  await db.schema
    .createIndex('kyc_submissions_user_tier_idx')
    .on('kyc_submissions')
    .columns(['user_id', 'tier', 'created_at'])
    .execute();
  // The rule "a tier is submitted once until rejected" as a constraint, so two concurrent
  // submissions cannot both be recorded.
  await sql`create unique index kyc_submissions_one_open_idx on kyc_submissions (user_id, tier)
    where status in ('pending', 'approved')`.execute(db);
  await db.schema
    .createIndex('kyc_submissions_review_idx')
    .on('kyc_submissions')
    .columns(['status', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('the kyc migration is not reversible');
}
