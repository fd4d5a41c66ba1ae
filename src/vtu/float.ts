import { sql } from 'kysely';
import type { FundingDestination, ProviderFunding } from '../funding/module.ts';
import type { VtuProvider } from '../providers/vtu/vtu-provider.ts';
import { firstRequeryAt, type VtuTransaction } from './purchases.ts';
import { countSettled, lockPurchase, type SettlementDeps, settleLocked } from './settlement.ts';

// Just-in-time funding of the providers' floats (SPEC.md item 3, issue 5 item 8). Before a purchase
// is sent, its provider's balance is read; when it would not cover the purchase (with what this
// process is sending to it at the same moment), the collections pool tops it up by a float top-up
// (funding's, src/funding/float-top-ups.ts) and the purchase waits, unsent. When the top-up
// settles the waiting purchases are dispatched again; when it fails they were never sent, so they
// fail and are refunded (operations are alerted by the top-up itself).

export type FloatDeps = SettlementDeps & {
  /** The float top-ups: funding's (its api). */
  funding: ProviderFunding;
  /** Each provider's bank account (configuration). */
  destinations: Record<string, Omit<FundingDestination, 'provider'>>;
  /** The least a top-up sends, so that a run of small purchases does not make a top-up each. */
  topupMinKobo: bigint;
  /** What this context is sending to each provider right now (createFloatInFlight). */
  inFlight: FloatInFlight;
};

/** What is being sent to each provider right now, not yet in the balance it reports. */
export type FloatInFlight = {
  /** Counts `kobo` as on its way to the provider; the function returned stops counting it. */
  reserve(provider: string, kobo: bigint): () => void;
  /** The kobo reserved for the provider and not released yet. */
  amount(provider: string): bigint;
};

/**
 * One per vtu module, so one per context (src/vtu/module.ts), never at module level: two contexts in
 * one process (two test worlds, or two services side by side) send to different sandboxes or
 * accounts, and an amount one of them has in flight says nothing about the other's balance.
 */
export function createFloatInFlight(): FloatInFlight {
  const sending = new Map<string, bigint>();
  return {
    reserve(provider, kobo) {
      sending.set(provider, (sending.get(provider) ?? 0n) + kobo);
      return () => sending.set(provider, (sending.get(provider) ?? 0n) - kobo);
    },
    amount: (provider) => sending.get(provider) ?? 0n,
  };
}

export type FloatDecision = 'send' | 'waiting' | 'failed';

/** What the float decides on: the purchase, its wholesale price and the top-up it may wait for. */
export type FloatCandidate = Pick<VtuTransaction, 'id' | 'wholesale' | 'funding_reference'>;

/**
 * Whether each purchase (all of one provider, in the order they are to be sent) may be sent now,
 * with one balance read for the lot. 'waiting': it is attached to a float top-up in progress.
 * 'failed': the top-up it waited for failed, and it has been refunded.
 */
export async function floatDecisions(
  deps: FloatDeps,
  provider: VtuProvider,
  purchases: FloatCandidate[],
): Promise<FloatDecision[]> {
  const decisions: FloatDecision[] = [];
  // Read once, when first needed: undefined before, null when it could not be read.
  let balance: bigint | null | undefined;
  // What this batch will send before the purchase at hand, beside what the process is sending.
  let planned = 0n;
  for (const purchase of purchases) {
    if (purchase.funding_reference !== null) {
      const status = await deps.funding.floatTopUpStatus(deps.db, purchase.funding_reference);
      if (status === 'pending') {
        decisions.push('waiting');
        continue;
      }
      if (status !== 'success') {
        decisions.push(await failWaiting(deps, purchase.id, 'the provider could not be funded'));
        continue;
      }
      // Settled: the balance decides, for the top-up may not cover every purchase that waited.
    }
    // Unreadable, the purchase itself will tell: a refusal for want of float is a definite failure,
    // refunded.
    balance ??= await provider.balance().catch(() => null);
    const inFlight = deps.inFlight.amount(provider.name) + planned;
    if (balance === null || balance - inFlight >= purchase.wholesale) {
      planned += purchase.wholesale;
      decisions.push('send');
      continue;
    }
    decisions.push(await topUpFor(deps, provider, purchase, balance - inFlight));
  }
  return decisions;
}

/** Attaches the purchase to a top-up of its provider's float, starting one if none is pending. */
async function topUpFor(
  deps: FloatDeps,
  provider: VtuProvider,
  purchase: FloatCandidate,
  available: bigint,
): Promise<FloatDecision> {
  const destination = deps.destinations[provider.name];
  if (destination === undefined) return 'send';
  // The shortfall, or the least a top-up sends (bigint: no Math.max).
  let amountKobo = purchase.wholesale - available;
  if (amountKobo < deps.topupMinKobo) amountKobo = deps.topupMinKobo;
  const now = deps.clock.now();
  const attached = await deps.db.transaction().execute(async (trx) => {
    // One decision at a time per provider, so that a burst of purchases shares one top-up.
    await sql`select pg_advisory_xact_lock(hashtext(${`vtu-float:${provider.name}`}))`.execute(trx);
    const current = await trx
      .selectFrom('vtu_transactions')
      .select(['status', 'sent_at'])
      .where('id', '=', purchase.id)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (current.status !== 'processing' || current.sent_at !== null) return null;
    const pending = await deps.funding.latestPendingFloatTopUpTo(trx, provider.name);
    const reference =
      pending ??
      (await deps.funding.recordFloatTopUp(trx, now, {
        destination: { provider: provider.name, ...destination },
        amountKobo,
        reason: `Float top-up of ${provider.name}`,
      }));
    await trx
      .updateTable('vtu_transactions')
      // Checked again by the requery runner, should the settlement be missed.
      .set({
        funding_reference: reference,
        next_requery_at: firstRequeryAt(now),
        updated_at: now,
      })
      .where('id', '=', purchase.id)
      .execute();
    return { reference, created: pending === undefined };
  });
  if (attached === null) return 'waiting';
  if (attached.created) {
    const topUp = await deps.funding.sendFloatTopUp(attached.reference);
    if (topUp.status === 'failed') return failWaiting(deps, purchase.id, 'the provider could not be funded');
  }
  return 'waiting';
}

/** Fails and refunds one purchase that waited for a top-up and was never sent. */
export async function failWaiting(deps: SettlementDeps, id: string, reason: string): Promise<'failed'> {
  const answers = [{ id, outcome: { status: 'failed', reason } as const }];
  const settled = await deps.db.transaction().execute(async (trx) => {
    const purchase = await lockPurchase(trx, id);
    if (purchase.status !== 'processing' || purchase.sent_at !== null) return null;
    const locked = new Map([[id, purchase]]);
    return { locked, results: await settleLocked(deps, trx, answers, locked) };
  });
  if (settled !== null) countSettled(deps.metrics, answers, settled.locked, settled.results);
  return 'failed';
}

/** Fails and refunds the purchases that waited, unsent, for a top-up that failed (funding.float_top_up_failed). */
export async function failPurchasesWaitingFor(
  deps: SettlementDeps,
  topUpReference: string,
  reason: string,
): Promise<void> {
  for (const id of await purchasesWaitingFor(deps, topUpReference)) {
    await failWaiting(deps, id, `the provider could not be funded: ${reason}`);
  }
}

/** The purchases waiting, unsent, for a float top-up. */
export async function purchasesWaitingFor(
  deps: Pick<SettlementDeps, 'db'>,
  reference: string,
): Promise<string[]> {
  const rows = await deps.db
    .selectFrom('vtu_transactions')
    .select('id')
    .where('funding_reference', '=', reference)
    .where('status', '=', 'processing')
    .where('sent_at', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}
