import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { MarkupChange, StoredMarkup } from '../catalogue/module.ts';
import {
  listPriceLevelsInput,
  listPriceLevelsOutput,
  markupOutput,
  setMarkupInput,
  setUserPriceLevelInput,
  setUserPriceLevelOutput,
} from '../catalogue/schemas.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { checkAndRecordLedger } from '../ledger/check-runs.ts';
import { basisPointsToPercent, koboToNaira, nairaToKobo, percentToBasisPoints } from '../money.ts';
import { defineOperation } from '../operation.ts';

/** A zod object of whole-number counts, one a name. */
function counts<const Name extends string>(...names: Name[]) {
  return z.object(
    Object.fromEntries(names.map((name) => [name, z.number().int()])) as Record<Name, z.ZodNumber>,
  );
}

/** What funding's reconciliation counts (funding/reconcile.ts): adminReconcile answers it. */
const fundingCounts = z.object({
  topups: counts('checked', 'credited', 'failed', 'expired', 'settledMeanwhile', 'stillPending', 'errors'),
  transfers: counts('checked', 'resolved', 'notFound', 'stillPending', 'errors'),
  dedicatedAccounts: counts('scanned', 'credited', 'alreadyCredited', 'ignored', 'errors'),
});

/** What the purchases' requery counts (vtu): adminReconcile answers it as `purchases`. */
const purchaseCounts = counts('checked', 'succeeded', 'failed', 'stillProcessing', 'dispatched', 'alerted');

/**
 * What the administrators' operations need: the ledger to check, and the functions of the domains
 * whose work an administrator runs now instead of waiting for its job.
 */
export type AdminDeps = {
  db: Kysely<DB>;
  /** When a ledger check ran, as recorded (ledger/check-runs.ts). */
  clock: Clock;
  /** Funding's reconciliation, with the limits of its five-minute job (funding/reconcile.ts). */
  reconcileFunding: () => Promise<z.input<typeof fundingCounts>>;
  /** Requeries every purchase still processing, due or not (vtu). */
  requeryPurchases: () => Promise<z.input<typeof purchaseCounts>>;
  /** Stores a markup; the next catalogue read and quote apply it (catalogue/pricing.ts). */
  setMarkup: (change: MarkupChange) => Promise<StoredMarkup>;
  /** Every stored markup, the default ones first, then each price level's (the catalogue's). */
  storedMarkups: () => Promise<StoredMarkup[]>;
  /** Whether a price level has a markup (the catalogue's). */
  priceLevelExists: (level: string) => Promise<boolean>;
  /** Puts a user on a price level or back on the default (auth's); false for no such user. */
  setUserPriceLevel: (change: { userId: string; level: string | null }) => Promise<boolean>;
  /** How many users are on each price level, null for none (auth's). */
  usersByPriceLevel: () => Promise<Map<string | null, number>>;
};

/** A stored markup at the API edge: naira and a percentage. */
const markupView = (stored: StoredMarkup) => ({
  service: stored.service,
  provider: stored.provider,
  flat: koboToNaira(stored.flatKobo),
  percent: basisPointsToPercent(stored.percentBp),
  updatedAt: stored.updatedAt.toISOString(),
});

/** The administrators' operations, closed over the module's deps. */
export const adminOperations = (deps: AdminDeps) => [
  defineOperation({
    name: 'adminLedgerCheck',
    method: 'GET',
    auth: 'admin',
    summary: 'Verify every balance against its entries and that all entries sum to zero',
    tags: ['admin'],
    input: z.object({}).strict(),
    output: z.object({
      ok: z.boolean(),
      accounts: z.number().int(),
      entries: z.number().int(),
      imbalances: z.array(z.record(z.string(), z.string())),
    }),
    errors: [],
    handler: () => checkAndRecordLedger(deps.db, () => deps.clock.now()),
  }),
  defineOperation({
    name: 'adminReconcile',
    method: 'POST',
    auth: 'admin',
    summary:
      'Reconcile now: re-verify pending top-ups (crediting each once) and pending funding transfers older than a minute with the provider, credit transfers into dedicated accounts whose webhook was lost, and requery every purchase still processing; returns counts',
    tags: ['admin'],
    input: z.object({}).strict(),
    output: fundingCounts.extend({ purchases: purchaseCounts }),
    errors: [],
    // The same run as the five-minute job, with the same limits: the next batch is one call away.
    handler: async () => ({
      ...(await deps.reconcileFunding()),
      purchases: await deps.requeryPurchases(),
    }),
  }),
  defineOperation({
    name: 'adminSetMarkup',
    method: 'POST',
    auth: 'admin',
    summary:
      'Set the markup of a VTU service (every provider), or of one provider of it, which wins: flat naira plus a percentage of the wholesale price; a field left out keeps its value. With `level`, the markup of that price level (the first one creates the level): its users pay it, and the default markup where their level has none',
    tags: ['admin'],
    input: setMarkupInput,
    output: markupOutput,
    errors: [],
    // The next catalogue read and quote show it: markups are applied at read time, never cached.
    handler: async ({ caller, input }) => {
      const stored = await deps.setMarkup({
        level: input.level ?? null,
        service: input.service,
        provider: input.provider ?? null,
        flatKobo: input.flat === undefined ? undefined : nairaToKobo(input.flat),
        percentBp: input.percent === undefined ? undefined : percentToBasisPoints(input.percent)!,
        updatedBy: caller.userId,
      });
      return { level: stored.level, ...markupView(stored) };
    },
  }),
  defineOperation({
    name: 'adminSetUserPriceLevel',
    method: 'POST',
    auth: 'admin',
    summary:
      'Put a user on a price level (one that has a markup: adminSetMarkup with `level`), or back on the default prices with null; their quotes, catalogue prices and purchases use it from the next request',
    tags: ['admin'],
    input: setUserPriceLevelInput,
    output: setUserPriceLevelOutput,
    errors: ['NOT_FOUND'],
    handler: async ({ input }) => {
      // A level with no markup would price exactly like the default, silently: most likely a typo.
      // Levels are never removed, so one found here still exists when the user row is written.
      if (input.level !== null && !(await deps.priceLevelExists(input.level))) {
        const message = 'no markup has this level: set one with adminSetMarkup first';
        throw new AppError('VALIDATION_ERROR', `no price level ${input.level}`, {
          details: { issues: [{ path: ['data', 'level'], message }] },
        });
      }
      if (!(await deps.setUserPriceLevel({ userId: input.userId, level: input.level }))) {
        throw new AppError('NOT_FOUND', 'no such user');
      }
      return { userId: input.userId, level: input.level };
    },
  }),
  defineOperation({
    name: 'adminListPriceLevels',
    method: 'GET',
    auth: 'admin',
    summary:
      'The price levels and their stored markups, with how many users are on each; the default markups (level null) first',
    tags: ['admin'],
    input: listPriceLevelsInput,
    output: listPriceLevelsOutput,
    errors: [],
    handler: async () => {
      const [markups, users] = await Promise.all([deps.storedMarkups(), deps.usersByPriceLevel()]);
      // The default is listed even with no markup stored: it is what every user without a level pays.
      const levels = new Map<string | null, StoredMarkup[]>([[null, []]]);
      for (const markup of markups) {
        const list = levels.get(markup.level) ?? [];
        list.push(markup);
        levels.set(markup.level, list);
      }
      return {
        items: [...levels].map(([level, stored]) => ({
          level,
          users: users.get(level) ?? 0,
          markups: stored.map(markupView),
        })),
      };
    },
  }),
];
