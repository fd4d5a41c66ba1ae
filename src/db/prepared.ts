import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';

// The statements of the purchase path run thousands of times a second, each with a text that never
// varies (lists go in as arrays). Named in the list below as prepared, they are prepared once per
// connection on PostgreSQL (database.ts): from then on the server neither parses nor plans them
// again and the client sends only their arguments. The mark is a comment, so PGlite runs them as
// they are, and so does PostgreSQL with DATABASE_PREPARED_STATEMENTS=0: behind a pooler in
// transaction mode that cannot keep named statements (PgBouncer before 1.21, decision 0027). A
// statement whose text varies with its arguments must not be prepared: each variant would stay
// prepared on every connection.
//
// Nor may a statement that looks rows up in a table the purchases themselves grow by thousands a
// minute (vtu_transactions, idempotency_keys). After five runs PostgreSQL may keep one plan for any
// arguments; made while such a table is young (a freshly deployed database, or a bench's), that plan
// is a sequential scan, and it stays until autovacuum next analyses the table, while every run reads
// more rows. Not prepared, such a statement is planned for its arguments and the table as it is each run
// (decision 0011; test/vtu/purchase-plans.test.ts). Tables that grow with people (users, sessions,
// accounts) or with configuration keep their cached plans.

const MARK = '/* prepared */ ';

/**
 * The statements of the hot paths, by name, with the decision for each: prepared (PostgreSQL keeps
 * a plan for it) or planned every run, and why. Domain code names the statement it runs
 * (`statement('vtu.record-purchases')`); this list is the one place that decides how. A statement
 * that looks rows up in vtu_transactions or idempotency_keys, which the purchases grow by thousands
 * a minute, is planned each run; inserts, and look-ups in tables that grow with people or with
 * configuration, are prepared.
 */
const statements = {
  'auth.callers-by-token': { prepared: true, why: 'tokens and sessions grow with people' },
  'auth.buyer-states': { prepared: true, why: 'users grow with people' },
  'auth.pin-states-shared': { prepared: true, why: 'users grow with people' },
  'auth.frozen-among': { prepared: true, why: 'users grow with people' },
  'catalogue.markups': { prepared: true, why: 'markups are configuration' },
  'idempotency.take-keys': { prepared: true, why: 'an insert; its conflict check is the unique index' },
  'idempotency.complete-keys': { prepared: false, why: 'looks keys up in idempotency_keys' },
  'ledger.lock-accounts': { prepared: true, why: 'accounts grow with people' },
  'ledger.write-postings': { prepared: true, why: 'inserts, and accounts looked up by code' },
  'ledger.lock-user-accounts': { prepared: true, why: 'accounts grow with people' },
  'limits.rows-of': { prepared: true, why: 'account_limits grows with people' },
  'limits.count-debits': { prepared: true, why: 'an upsert by user id' },
  'auth.tiers-among': { prepared: true, why: 'users grow with people' },
  'vtu.record-purchases': { prepared: true, why: 'an insert' },
  'vtu.claim-candidates': { prepared: false, why: 'looks purchases up in vtu_transactions' },
  'vtu.claim': { prepared: false, why: 'updates purchases found in vtu_transactions' },
  'vtu.settlement-purchases': { prepared: false, why: 'looks purchases up in vtu_transactions' },
  'vtu.settlement-states': { prepared: false, why: 'updates purchases found in vtu_transactions' },
  'vtu.claim-locks': { prepared: false, why: 'locks purchases found in vtu_transactions' },
  'vtu.float-reservations': { prepared: true, why: 'one row per provider' },
  'vtu.float-reserve': { prepared: true, why: 'one row per provider' },
  'vtu.float-release': { prepared: true, why: 'one row per provider' },
} as const satisfies Record<string, { prepared: boolean; why: string }>;

export type StatementName = keyof typeof statements;

/** Whether the named statement is prepared, for the tests that hold the list to its rule. */
export const isPrepared = (name: StatementName): boolean => statements[name].prepared;

/**
 * Like kysely's `sql`, for a named statement of the list above: prepared once per connection when
 * the list says so (its text must then not vary with its values), planned each run otherwise.
 * The name goes into the text as a comment, so it also names the statement in PostgreSQL's views.
 */
export function statement<T = unknown>(
  name: StatementName,
): (strings: TemplateStringsArray, ...values: unknown[]) => RawBuilder<T> {
  const head = `${statements[name].prepared ? MARK : ''}/* ${name} */ `;
  return (strings, ...values) => headed<T>(head, strings, values);
}

/** Marks a statement prepared outside the list: for tests of the mechanism only. */
export function prepared<T = unknown>(strings: TemplateStringsArray, ...values: unknown[]): RawBuilder<T> {
  return headed<T>(MARK, strings, values);
}

/** kysely's `sql` over the template with `head` put before its text. */
function headed<T>(head: string, strings: TemplateStringsArray, values: unknown[]): RawBuilder<T> {
  const marked = [head + strings[0], ...strings.slice(1)];
  return sql<T>(Object.assign(marked, { raw: marked }) as unknown as TemplateStringsArray, ...values);
}

/**
 * The name a marked statement is prepared under (the same on every connection); undefined if
 * unmarked. A pure function of the text: a connection that runs it for every statement keeps the
 * names it has made (database.ts), so this module holds no state.
 */
export function preparedName(text: string): string | undefined {
  if (!text.startsWith(MARK)) return undefined;
  return `billrail_${createHash('sha1').update(text).digest('base64url')}`;
}
