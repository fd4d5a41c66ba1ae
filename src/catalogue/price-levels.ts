import type { Kysely } from 'kysely';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { StoredMarkup } from './pricing.ts';

// The price levels (API.md section 16): a level exists while it has a markup of its own, set by
// adminSetMarkup with its name; there is no other list of levels to keep in step with the markups.
// Which level a user is on is auth's (the user row); the catalogue knows the levels and their prices.

/**
 * A level's name: a lowercase slug of 1 to 32 characters, letters and digits with inner hyphens
 * (`reseller`, `gold-2`), so that it reads the same in a URL, a log line and the admin screen. The
 * database holds both columns to the same pattern (migration 2026-12-02T1300).
 */
export const priceLevelPattern = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** The markups without a level are "the default": a level of that name would read as them. */
export const reservedPriceLevel = 'default';

/** Every stored markup: the default ones (level null) first, then each level's, by name. */
export async function storedMarkups(db: Kysely<DB>): Promise<StoredMarkup[]> {
  const rows = await db
    .selectFrom('vtu_markups')
    .select(['level', 'service', 'provider', 'flat_kobo', 'percent_bp', 'updated_at'])
    .orderBy('level', (ob) => ob.asc().nullsFirst())
    .orderBy('service')
    .orderBy('provider', (ob) => ob.asc().nullsFirst())
    .execute();
  return rows.map((row) => ({
    level: row.level,
    service: row.service as VtuServiceName,
    provider: row.provider as VtuProviderName | null,
    flatKobo: BigInt(row.flat_kobo),
    percentBp: row.percent_bp,
    updatedAt: new Date(row.updated_at),
  }));
}

/** Whether a level has a markup, and so can be given to a user. */
export async function priceLevelExists(db: Kysely<DB>, level: string): Promise<boolean> {
  const row = await db
    .selectFrom('vtu_markups')
    .select('level')
    .where('level', '=', level)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
