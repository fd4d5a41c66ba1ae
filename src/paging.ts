import { type SelectQueryBuilder, sql } from 'kysely';
import { z } from 'zod';

/** The query fields of every list (API.md section 5): `limit` 1–100 (default 20), `offset` from 0. */
export const pageInput = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

/** Which page of a list: how many rows, after how many. */
export type Page = { limit: number; offset: number };

/** Every row of a list at once: a person's own records in their data export (API.md 17.3). */
export const everyRow: Page = { limit: 1_000_000_000, offset: 0 };

/**
 * One page of the rows a query selects, newest first (created_at, then id: ids are UUIDv7, so rows
 * made in the same instant keep one order and none repeats or goes missing between pages), and how
 * many rows the query matches in all.
 */
export async function newestFirstPage<DB, TB extends keyof DB>(
  query: SelectQueryBuilder<DB, TB, object>,
  page: Page,
) {
  const rows = await query
    .selectAll()
    .orderBy(sql.ref('created_at'), 'desc')
    .orderBy(sql.ref('id'), 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  // Kysely cannot tell the selection's type through the generic table: it is this one column.
  const counted = await query
    .select(sql<string>`count(*)::text`.as('n'))
    .$castTo<{ n: string }>()
    .executeTakeFirstOrThrow();
  return { rows, total: Number(counted.n) };
}
