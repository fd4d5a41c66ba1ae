import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { basisPointsMax, basisPointsToPercent, koboToNaira } from '../money.ts';

// Retail = wholesale + markup (SPEC.md item 6). A markup is a flat amount plus a percentage of the
// wholesale price, configured per service and optionally per provider; the provider's own row wins
// over the service-wide one, and no row at all is no markup. Everything here is integer kobo and
// integer basis points: no float ever touches a price.
//
// Prices are what the catalogue shows, so the rule lives here; a purchase (vtu/) applies the same
// rule at debit time by importing it, so that what is charged is what was listed.
//
// Price levels (API.md section 16): a markup may belong to a named level (resellers pay less, say),
// and a user put on a level pays its markups. A level is an overlay on the default markups: the
// level's own row for the provider, else its service-wide row, else the default markup as above. So
// a level need only name the services it changes, and a user with no level (null) or on a level
// with no row for a service pays the default.

export type Markup = {
  flatKobo: bigint;
  /** Basis points of the wholesale price: 250 is 2.5 %. */
  percentBp: number;
};

export type StoredMarkup = Markup & {
  /** Null: the default markup. */
  level: string | null;
  service: VtuServiceName;
  /** Null: the row applies to every provider of the service. */
  provider: VtuProviderName | null;
  updatedAt: Date;
};

export type Price = { retailKobo: bigint; markupKobo: bigint };

export const noMarkup: Markup = { flatKobo: 0n, percentBp: 0 };

/**
 * The price of one wholesale amount under a markup. The percentage is rounded UP to the kobo: a
 * fraction of a kobo rounded down would be sold below what the markup says, on every sale.
 */
export function applyMarkup(markup: Markup, wholesaleKobo: bigint): Price {
  assert.ok(wholesaleKobo >= 0n, `a wholesale price is never negative: ${wholesaleKobo}`);
  assert.ok(markup.flatKobo >= 0n, `a flat markup is never negative: ${markup.flatKobo}`);
  assert.ok(Number.isInteger(markup.percentBp), 'basis points are whole');
  assert.ok(
    markup.percentBp >= 0 && markup.percentBp <= basisPointsMax,
    `percent out of range: ${markup.percentBp}`,
  );
  const scaled = wholesaleKobo * BigInt(markup.percentBp);
  const divisor = BigInt(basisPointsMax);
  const percentKobo = (scaled + divisor - 1n) / divisor;
  const markupKobo = markup.flatKobo + percentKobo;
  return { retailKobo: wholesaleKobo + markupKobo, markupKobo };
}

export type MarkupRow = {
  level: string | null;
  service: string;
  provider: string | null;
  flat_kobo: bigint | string;
  percent_bp: number;
};

/**
 * The markup that applies to a service sold through a provider to a user on a level (null: none),
 * among stored rows: the level's provider row, its service-wide row, then the default's in the same
 * order; no row at all is no markup.
 */
export function markupAmong(
  rows: readonly MarkupRow[],
  service: VtuServiceName,
  provider: VtuProviderName,
  level: string | null,
): Markup {
  const find = (rowLevel: string | null, rowProvider: VtuProviderName | null) =>
    rows.find((r) => r.level === rowLevel && r.service === service && r.provider === rowProvider);
  const row =
    (level === null ? undefined : (find(level, provider) ?? find(level, null))) ??
    find(null, provider) ??
    find(null, null);
  return row === undefined ? noMarkup : { flatKobo: BigInt(row.flat_kobo), percentBp: row.percent_bp };
}

/**
 * Every stored markup, of every level (a few dozen rows per level: one per service, and per
 * provider), for a caller that applies them to many prices at once (markupAmong): the purchases read
 * them once per batch, whatever the levels of their buyers.
 */
export async function readMarkups(db: Kysely<DB>): Promise<MarkupRow[]> {
  const { rows } = await statement<MarkupRow>('catalogue.markups')`
    select level, service, provider, flat_kobo, percent_bp from vtu_markups`.execute(db);
  return rows;
}

/**
 * Sets the markup of a service (provider null) or of one provider of it, for a level or the default
 * (level null). A field left out keeps its stored value (zero for a new row), so an administrator can
 * change the percentage alone. The first markup of a level brings the level into being.
 */
export async function setMarkup(
  deps: { db: Kysely<DB>; clock: Clock; markupMax: { flatKobo: bigint; percentBp: number } },
  request: {
    level: string | null;
    service: VtuServiceName;
    provider: VtuProviderName | null;
    flatKobo: bigint | undefined;
    percentBp: number | undefined;
    updatedBy: string;
  },
): Promise<StoredMarkup> {
  if (request.flatKobo !== undefined) assert.ok(request.flatKobo >= 0n, 'a flat markup is never negative');
  if (request.percentBp !== undefined) {
    assert.ok(Number.isInteger(request.percentBp), 'basis points are whole');
    assert.ok(request.percentBp >= 0 && request.percentBp <= basisPointsMax, 'percent out of range');
  }
  const over = [
    request.flatKobo !== undefined &&
      request.flatKobo > deps.markupMax.flatKobo && {
        path: ['data', 'flat'],
        message: `at most ${koboToNaira(deps.markupMax.flatKobo)} naira (VTU_MARKUP_FLAT_MAX)`,
      },
    request.percentBp !== undefined &&
      request.percentBp > deps.markupMax.percentBp && {
        path: ['data', 'percent'],
        message: `at most ${basisPointsToPercent(deps.markupMax.percentBp)} percent (VTU_MARKUP_PERCENT_MAX)`,
      },
  ].filter((issue) => issue !== false);
  if (over.length > 0) {
    throw new AppError('VALIDATION_ERROR', 'the markup is above the configured maximum', {
      details: { issues: over },
    });
  }
  const now = deps.clock.now();
  const row = await deps.db
    .insertInto('vtu_markups')
    .values({
      level: request.level,
      service: request.service,
      provider: request.provider,
      flat_kobo: request.flatKobo ?? 0n,
      percent_bp: request.percentBp ?? 0,
      updated_by: request.updatedBy,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['level', 'service', 'provider']).doUpdateSet((eb) => ({
        flat_kobo: request.flatKobo ?? eb.ref('vtu_markups.flat_kobo'),
        percent_bp: request.percentBp ?? eb.ref('vtu_markups.percent_bp'),
        updated_by: request.updatedBy,
        updated_at: now,
      })),
    )
    .returning(['level', 'service', 'provider', 'flat_kobo', 'percent_bp', 'updated_at'])
    .executeTakeFirstOrThrow();
  return {
    level: row.level,
    service: row.service as VtuServiceName,
    provider: row.provider as VtuProviderName | null,
    flatKobo: BigInt(row.flat_kobo),
    percentBp: row.percent_bp,
    updatedAt: new Date(row.updated_at),
  };
}
