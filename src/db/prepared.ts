import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';

// The statements of the purchase path run thousands of times a second, each with a text that never
// varies (lists go in as arrays). Marked with `prepared`, they are prepared once per connection on
// PostgreSQL (database.ts): from then on the server neither parses nor plans them again and the
// client sends only their arguments. The mark is a comment, so PGlite runs them as they are.
// A statement whose text varies with its arguments must not be marked: each variant would stay
// prepared on every connection.
//
// Nor may a statement that looks rows up in a table the purchases themselves grow by thousands a
// minute (vtu_transactions, idempotency_keys). After five runs PostgreSQL may keep one plan for any
// arguments; made while such a table is young (a freshly deployed database, or a bench's), that plan
// is a sequential scan, and it stays until autovacuum next analyses the table, while every run reads
// more rows. Unmarked, such a statement is planned for its arguments and the table as it is each run
// (decision 0011; test/vtu/purchase-plans.test.ts). Tables that grow with people (users, sessions,
// accounts) or with configuration keep their cached plans.

const MARK = '/* prepared */ ';

/** Like kysely's `sql`, for a statement prepared once per connection (its text must not vary). */
export function prepared<T = unknown>(strings: TemplateStringsArray, ...values: unknown[]): RawBuilder<T> {
  const marked = [MARK + strings[0], ...strings.slice(1)];
  return sql<T>(Object.assign(marked, { raw: marked }) as unknown as TemplateStringsArray, ...values);
}

/** Marked texts are few and fixed: each is hashed once. */
const names = new Map<string, string>();

/** The name a marked statement is prepared under (the same on every connection); undefined if unmarked. */
export function preparedName(text: string): string | undefined {
  if (!text.startsWith(MARK)) return undefined;
  let name = names.get(text);
  if (name === undefined) {
    name = `billrail_${createHash('sha1').update(text).digest('base64url')}`;
    names.set(text, name);
  }
  return name;
}
