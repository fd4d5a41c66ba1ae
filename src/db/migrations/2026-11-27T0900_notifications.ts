import { type Kysely, sql } from 'kysely';

// The in-app inbox, broadcasts and polls (SPEC.md item 8, API.md section 10). A notification is one
// row per user, made once per fact: `source` names the fact (the domain event, the alert), unique
// per user, so an event job that runs twice makes one entry. A broadcast is one row whatever the
// number of users; a poll's votes are one row per user and poll (the primary key: a second vote,
// also a concurrent one, is refused).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('read_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('notifications_source_unique', ['user_id', 'source'])
    .execute();
  await db.schema
    .createIndex('notifications_user_idx')
    .on('notifications')
    .columns(['user_id', 'created_at'])
    .execute();
  await sql`create index notifications_unread_idx on notifications (user_id) where read_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('broadcasts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_by', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ends_at', 'timestamptz')
    .addCheckConstraint('broadcasts_window', sql`ends_at is null or ends_at > starts_at`)
    .execute();
  await db.schema
    .createIndex('broadcasts_window_idx')
    .on('broadcasts')
    .columns(['starts_at', 'ends_at'])
    .execute();

  await db.schema
    .createTable('polls')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('broadcast_id', 'uuid', (c) => c.notNull().unique().references('broadcasts.id'))
    .addColumn('question', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('poll_options')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('poll_id', 'uuid', (c) => c.notNull().references('polls.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addUniqueConstraint('poll_options_position_unique', ['poll_id', 'position'])
    .execute();
  await db.schema
    .createTable('poll_votes')
    .addColumn('poll_id', 'uuid', (c) => c.notNull().references('polls.id'))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('option_id', 'uuid', (c) => c.notNull().references('poll_options.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('poll_votes_pk', ['poll_id', 'user_id'])
    .execute();
  await db.schema.createIndex('poll_votes_option_idx').on('poll_votes').column('option_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['poll_votes', 'poll_options', 'polls', 'broadcasts', 'notifications']) {
    await db.schema.dropTable(table).execute();
  }
}
