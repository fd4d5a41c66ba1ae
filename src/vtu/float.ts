import assert from 'node:assert/strict';
import { type Kysely, sql } from 'kysely';
import { fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import type { FundingDestination, ProviderFunding } from '../funding/module.ts';
import type { VtuProvider } from '../providers/vtu/vtu-provider.ts';
import {
  type FloatReservation,
  lockFloatReservations,
  readFloatReservations,
  reserveFloat,
} from './float-reservations.ts';
import { firstRequeryAt, type VtuTransaction } from './purchases.ts';
import { countSettled, lockPurchase, type SettlementDeps, settleLocked } from './settlement.ts';

// Just-in-time funding of the providers' floats (SPEC.md item 3, issue 5 item 8). Before a purchase
// is sent, its provider's balance is read; when it would not cover the purchase (with what every
// process is sending to it at the same moment, float-reservations.ts), the collections pool tops it
// up by a float top-up (funding's, src/funding/float-top-ups.ts) and the purchase waits, unsent. When
// the top-up settles the waiting purchases are dispatched again; when it fails they were never sent,
// so they fail and are refunded (operations are alerted by the top-up itself).
//
// Decided twice: first on the balance read and the reservations as they were before it, which starts
// the top-ups a purchase clearly needs; then again in the transaction that claims the purchases,
// under their provider's reservation row, where what other processes reserved meanwhile counts. The
// second decision can only be stricter than the first (what it counts never shrinks between the two),
// so a purchase the first held back is never sent by it.

export type FloatDeps = SettlementDeps & {
  /** The float top-ups: funding's (its api). */
  funding: ProviderFunding;
  /** Each provider's bank account (configuration). */
  destinations: Record<string, Omit<FundingDestination, 'provider'>>;
  /** The least a top-up sends, so that a run of small purchases does not make a top-up each. */
  topupMinKobo: bigint;
};

export type FloatDecision = 'send' | 'waiting' | 'failed';

/** What the float decides on: the purchase, its wholesale price and the top-up it may wait for. */
export type FloatCandidate = Pick<VtuTransaction, 'id' | 'wholesale' | 'funding_reference'>;

/**
 * What a provider's float is decided on for a batch: its balance as it reported it (null: it could
 * not be read, and the purchases themselves will tell) and its reservation row as it was just before.
 */
export type FloatPlan = { provider: VtuProvider; balance: bigint | null; before: FloatReservation };

/**
 * Whether each purchase (all of one provider, in the order they are to be sent) may be sent now,
 * with one balance read for the lot. 'waiting': it is attached to a float top-up in progress.
 * 'failed': the top-up it waited for failed, and it has been refunded. 'send' is decided again under
 * the provider's reservation row by claimWithinFloat, with the plan returned (undefined when no
 * purchase came to the balance).
 */
export async function floatDecisions(
  deps: FloatDeps,
  provider: VtuProvider,
  purchases: FloatCandidate[],
): Promise<{ decisions: FloatDecision[]; plan: FloatPlan | undefined }> {
  const decisions: FloatDecision[] = [];
  // Read once, when first needed.
  let plan: FloatPlan | undefined;
  // What this batch will send before the purchase at hand, beside what every process is sending.
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
    plan ??= await planFor(deps, provider);
    const left = availableOf(plan, plan.before);
    const available = left === null ? null : left - planned;
    // Unreadable, the purchase itself will tell: a refusal for want of float is a definite failure,
    // refunded.
    if (available === null || available >= purchase.wholesale) {
      planned += purchase.wholesale;
      decisions.push('send');
      continue;
    }
    decisions.push(await topUpFor(deps, provider, purchase, available));
  }
  return { decisions, plan };
}

/** The reservations, then the balance: in that order, so that nothing released between is missed. */
async function planFor(deps: FloatDeps, provider: VtuProvider): Promise<FloatPlan> {
  const before = (await readFloatReservations(deps.db, [provider.name])).get(provider.name)!;
  const balance = await provider.balance().catch(() => null);
  return { provider, balance, before };
}

/**
 * The float left for more sends: the balance read less what is reserved now, and less what was
 * released since the snapshot taken before the balance was read (answered meanwhile, it may not be in
 * the balance read: counted, to be safe). Null when the balance could not be read.
 */
function availableOf(plan: FloatPlan, now: FloatReservation): bigint | null {
  if (plan.balance === null) return null;
  return plan.balance - now.reservedKobo - (now.releasedKobo - plan.before.releasedKobo);
}

/** A purchase decided 'send', as a claim takes it. */
export type SendCandidate = Pick<
  VtuTransaction,
  'id' | 'provider' | 'wholesale' | 'direction' | 'funding_reference'
>;

/**
 * Claims the purchases decided 'send' (by `claim`, the conditional UPDATE that marks them sent,
 * told whether they reserve) in one transaction that first locks them, then their providers'
 * reservation rows; decides each debit's float again there, reserves what the claim won on the rows
 * (one UPDATE for the batch), and commits. A purchase the float no longer covers is not claimed: it
 * waits for a top-up (started after the commit), as floatDecisions would have had it. Without
 * just-in-time funding, the claim alone.
 */
export async function claimWithinFloat<T extends { id: string }>(
  deps: Pick<FloatDeps, 'db' | 'clock'> & { float?: FloatDeps },
  plans: ReadonlyMap<string, FloatPlan>,
  candidates: SendCandidate[],
  claim: (db: Kysely<DB>, ids: string[], reserving: boolean) => Promise<T[]>,
): Promise<{ claimed: T[]; decided: Map<string, PromiseSettledResult<FloatDecision>> }> {
  const float = deps.float;
  const ids = candidates.map((p) => p.id);
  if (float === undefined) return { claimed: await claim(deps.db, ids, false), decided: new Map() };
  const now = deps.clock.now();
  const short: Array<{ purchase: SendCandidate; available: bigint }> = [];
  const claimed = await deps.db.transaction().execute(async (trx) => {
    // The purchases first, as a settlement locks them before it releases: no circle of waits.
    const { rows: unsent } = await statement<{ id: string }>('vtu.claim-locks')`
      select id from vtu_transactions
      where id = any(${ids}::uuid[]) and status = 'processing' and sent_at is null
      order by id for update`.execute(trx);
    const stillUnsent = new Set(unsent.map((r) => r.id));
    const locked = candidates.filter((p) => stillUnsent.has(p.id));
    const providers = locked.filter((p) => p.direction === 'debit').map((p) => p.provider);
    const rows =
      providers.length === 0
        ? new Map<string, FloatReservation>()
        : await lockFloatReservations(trx, providers, now);
    // What this batch sends to each provider before the purchase at hand.
    const planned = new Map<string, bigint>();
    const toClaim = locked.filter((purchase) => {
      if (purchase.direction !== 'debit') return true;
      const plan = plans.get(purchase.provider);
      // floatDecisions decided it 'send' on a balance, so made its provider's plan.
      assert.ok(plan !== undefined, `a plan for ${purchase.provider}`);
      const sending = planned.get(purchase.provider) ?? 0n;
      const left = availableOf(plan, rows.get(purchase.provider)!);
      const available = left === null ? null : left - sending;
      // A provider with no bank account to top up is sent to as it comes (topUpFor's rule).
      const noTopUp = float.destinations[purchase.provider] === undefined;
      if (available === null || available >= purchase.wholesale || noTopUp) {
        planned.set(purchase.provider, sending + purchase.wholesale);
        return true;
      }
      short.push({ purchase, available });
      return false;
    });
    const won =
      toClaim.length === 0
        ? []
        : await claim(
            trx,
            toClaim.map((p) => p.id),
            true,
          );
    await reserveFloat(trx, reservedBy(toClaim, won), now);
    return won;
  });
  // After the commit: a top-up is sent to the payment provider, outside any transaction. One that
  // cannot be started fails its purchase's claim alone, not the purchases claimed beside it.
  const decided = new Map<string, PromiseSettledResult<FloatDecision>>();
  for (const { purchase, available } of short) {
    const plan = plans.get(purchase.provider)!;
    try {
      decided.set(purchase.id, fulfilled(await topUpFor(float, plan.provider, purchase, available)));
    } catch (error) {
      decided.set(purchase.id, rejected(error));
    }
  }
  return { claimed, decided };
}

/** What the purchases a claim won hold of each provider's float: their wholesale prices, debits only. */
function reservedBy(candidates: SendCandidate[], won: Array<{ id: string }>): Map<string, bigint> {
  const byId = new Map(candidates.map((p) => [p.id, p]));
  const reserved = new Map<string, bigint>();
  for (const { id } of won) {
    const purchase = byId.get(id)!;
    if (purchase.direction !== 'debit') continue;
    reserved.set(purchase.provider, (reserved.get(purchase.provider) ?? 0n) + purchase.wholesale);
  }
  return reserved;
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
