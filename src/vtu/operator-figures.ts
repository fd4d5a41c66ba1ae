import { sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { VtuProvider } from '../providers/vtu/vtu-provider.ts';
import type { SettlementDeps } from './settlement.ts';

// What operators watch of the purchases (/metrics reads it at each scrape, through the vtu api):
// each provider's float against its floor, and the purchases still processing, with those older
// than the stuck-alert window. Read when asked, never cached: one query, or one balance call per
// provider, per scrape.

/** A provider's float as it reports it now; null when it could not be read (then the call counts as an error). */
export type FloatBalance = { provider: string; balanceKobo: bigint | null; floorKobo: bigint };

/** Every provider's balance, read at once; a provider that does not answer is null, not a failure of the lot. */
export async function floatBalances(
  providers: Record<string, VtuProvider>,
  floorKobo: bigint,
): Promise<FloatBalance[]> {
  return Promise.all(
    Object.entries(providers).map(async ([provider, adapter]) => ({
      provider,
      balanceKobo: await adapter.balance().catch(() => null),
      floorKobo,
    })),
  );
}

export type ProcessingPurchases = {
  /** Every purchase still processing (sent or not, pending or unknown at the provider). */
  processing: number;
  /** Those among them accepted longer ago than `stuckAfterSeconds`: the ones alerted as stuck. */
  stuck: number;
};

/**
 * Purchases still processing, and those older than the window: one statement over the partial
 * index of processing purchases (vtu_transactions_requery_idx), so as cheap as the backlog is small.
 */
export async function processingPurchases(
  deps: Pick<SettlementDeps, 'db'> & { clock: Clock },
  stuckAfterSeconds: number,
): Promise<ProcessingPurchases> {
  const stuckBefore = new Date(deps.clock.now().getTime() - stuckAfterSeconds * 1000);
  const { rows } = await sql<{ processing: string; stuck: string }>`
    select count(*) as processing, count(*) filter (where created_at < ${stuckBefore}) as stuck
    from vtu_transactions where status = 'processing'`.execute(deps.db);
  const row = rows[0];
  return { processing: Number(row?.processing ?? 0), stuck: Number(row?.stuck ?? 0) };
}
