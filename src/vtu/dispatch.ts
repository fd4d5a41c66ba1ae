import type { Logger } from 'pino';
import { type Batcher, type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import {
  type PurchaseOutcome,
  type PurchaseRequest,
  type RequeryOutcome,
  type VtuProvider,
  VtuRefusedLocally,
  type VtuService,
} from '../providers/vtu/vtu-provider.ts';
import type { DebitRule } from './debit-rules.ts';
import { type FloatDecision, type FloatDeps, floatDecisions } from './float.ts';
import {
  alertStuck,
  firstRequeryAfterSeconds,
  firstRequeryAt,
  type PurchaseAnswer,
  type SettlementDeps,
  type SettleResult,
  type VtuTransaction,
} from './settlement.ts';

// Sending a purchase to its provider, and finding out what became of it. The provider is called at
// most once per purchase: dispatch claims the row (sent_at) in one conditional UPDATE before the
// call, so the inline run after acceptance, the durable job and the requery runner can race and only
// one sends. Whatever happens after the claim (an answer, a timeout, a crash) is settled by requery
// under the same reference.

export const JOB_VTU_DISPATCH = 'vtu.dispatch';
export const JOB_VTU_REQUERY = 'vtu.requery';

export type DispatchDeps = SettlementDeps & {
  /** The purchase rules decided at debit time (debit-rules.ts); none by default. */
  debitRules?: readonly DebitRule[];
  providers: Record<string, VtuProvider>;
  logger?: Pick<Logger, 'warn' | 'error'>;
  /** Just-in-time funding of the providers' floats (float.ts); without it purchases are sent as they come. */
  float?: Omit<FloatDeps, keyof SettlementDeps>;
};

/** The stages a dispatch hands its work on to: the group commit of claims and of settlements. */
export type SendStages = {
  claim: Batcher<string, Claim>;
  settle: Batcher<PurchaseAnswer, SettleResult>;
};

/** The request stored with a purchase, as the adapter takes it. */
export function purchaseRequestOf(purchase: Pick<VtuTransaction, 'request' | 'reference'>): PurchaseRequest {
  const stored = (
    typeof purchase.request === 'string' ? JSON.parse(purchase.request) : purchase.request
  ) as Record<string, unknown>;
  const { amountKobo, ...rest } = stored;
  return {
    ...rest,
    ...(typeof amountKobo === 'string' ? { amountKobo: BigInt(amountKobo) } : {}),
    reference: purchase.reference,
  } as PurchaseRequest;
}

export type DispatchResult = SettleResult | 'already_sent' | Exclude<FloatDecision, 'send'>;

/** What a claim reads of a purchase: whether it is still to send, and what the float decides on. */
type ClaimCandidate = Pick<
  VtuTransaction,
  'id' | 'status' | 'sent_at' | 'provider' | 'wholesale' | 'funding_reference' | 'direction'
>;

/** What a claimed purchase is sent with. */
type ClaimedPurchase = Pick<VtuTransaction, 'id' | 'provider' | 'reference' | 'request'>;

/** A purchase claimed for sending (with its share of the float reserved), or why it was not. */
export type Claim =
  | { purchase: ClaimedPurchase; release: () => void }
  | 'already_sent'
  | Exclude<FloatDecision, 'send'>;

/**
 * Sends a purchase not sent yet and settles it on the answer: 'already_sent' when another run did,
 * 'waiting' when its provider's float is being topped up first (it is dispatched again then). The
 * claim and the settlement go through the group commit (the pipeline's stages): under load one statement
 * claims many purchases and one transaction settles many answers.
 */
export async function dispatchPurchase(
  deps: DispatchDeps,
  stages: SendStages,
  id: string,
): Promise<DispatchResult> {
  const claim = await stages.claim.add(id);
  if (typeof claim === 'string') return claim;
  let outcome: PurchaseOutcome;
  try {
    outcome = await providerOf(deps, claim.purchase.provider).purchase(purchaseRequestOf(claim.purchase));
  } catch (error) {
    // Refused by the adapter before sending: nothing reached the provider, as definite as its own
    // refusal. Anything else (a timeout that escaped, a bug): we cannot tell, so requery.
    if (error instanceof VtuRefusedLocally) {
      outcome = { status: 'failed', reason: error.message };
    } else {
      outcome = { status: 'unknown', reason: `dispatch failed: ${(error as Error).message}` };
      deps.logger?.error({ err: error, id }, 'purchase dispatch failed');
    }
  } finally {
    claim.release();
  }
  return stages.settle.add({ id, outcome });
}

/**
 * Claims for sending the purchases not sent yet: decides each provider's float once for the lot,
 * then marks them sent (sent_at) in one conditional UPDATE, which only one of several racing runs
 * (the inline dispatch, the durable job, the requery runner) can win for each purchase.
 */
export async function claimPurchases(deps: DispatchDeps, ids: string[]): Promise<BatchResults<Claim>> {
  // By id alone, filtered here: the conditions in the query let the planner intersect the id look-up
  // with the index of every processing purchase, dead entries and all, at several times the cost.
  const { rows } = await statement<ClaimCandidate>('vtu.claim-candidates')`
    select id, status, sent_at, provider, wholesale, funding_reference, direction from vtu_transactions
    where id = any(${[...new Set(ids)]}::uuid[]) order by id`.execute(deps.db);
  const unsent = rows.filter((p) => p.status === 'processing' && p.sent_at === null);
  const decided = new Map<string, PromiseSettledResult<FloatDecision>>();
  // A credit (airtime-to-cash) spends nothing at the provider: no float to decide on.
  for (const p of unsent) if (p.direction === 'credit') decided.set(p.id, fulfilled('send'));
  const debits = unsent.filter((p) => p.direction === 'debit');
  for (const [name, purchases] of Map.groupBy(debits, (p) => p.provider)) {
    const provider = providerOf(deps, name);
    try {
      const decisions =
        deps.float === undefined
          ? purchases.map((): FloatDecision => 'send')
          : await floatDecisions({ ...deps, ...deps.float }, provider, purchases);
      for (const [i, p] of purchases.entries()) decided.set(p.id, fulfilled(decisions[i]!));
    } catch (error) {
      for (const p of purchases) decided.set(p.id, rejected(error));
    }
  }
  const toSend = unsent.filter((p) => {
    const decision = decided.get(p.id);
    return decision?.status === 'fulfilled' && decision.value === 'send';
  });
  // Without just-in-time funding nothing reads what is in flight, so there is nothing to count.
  const inFlight = deps.float?.inFlight;
  const releases = new Map(
    toSend.map((p) => [
      p.id,
      (p.direction === 'debit' ? inFlight?.reserve(p.provider, p.wholesale) : undefined) ?? nothingReserved,
    ]),
  );
  let claimed: ClaimedPurchase[] = [];
  try {
    if (toSend.length > 0) {
      const now = deps.clock.now();
      // The first requery comes a minute after the send. A purchase sent right after its acceptance
      // keeps the minute from its acceptance: its row is then rewritten in place, no index touched
      // (migration 2026-11-24T1300). One sent later (after a top-up, by its job) gets its minute anew.
      const requeryNotBefore = new Date(now.getTime() + (firstRequeryAfterSeconds / 2) * 1000);
      claimed = (
        await statement<ClaimedPurchase>('vtu.claim')`
          update vtu_transactions set sent_at = ${now}::timestamptz, updated_at = ${now}::timestamptz,
            next_requery_at = case when next_requery_at < ${requeryNotBefore}::timestamptz
              then ${firstRequeryAt(now)}::timestamptz else next_requery_at end
          where id = any(${toSend.map((p) => p.id)}::uuid[]) and status = 'processing' and sent_at is null
          returning id, provider, reference, request`.execute(deps.db)
      ).rows;
    }
  } finally {
    const won = new Set(claimed.map((p) => p.id));
    for (const [id, release] of releases) if (!won.has(id)) release();
  }
  const byId = new Map(claimed.map((p) => [p.id, p]));
  return ids.map((id): PromiseSettledResult<Claim> => {
    const purchase = byId.get(id);
    if (purchase !== undefined) {
      // The first asker of an id sends it; a repeat of the id in the batch finds it sent.
      byId.delete(id);
      return fulfilled({ purchase, release: releases.get(id)! });
    }
    const decision = decided.get(id);
    if (decision === undefined || (decision.status === 'fulfilled' && decision.value === 'send'))
      return fulfilled('already_sent');
    return decision.status === 'rejected'
      ? decision
      : fulfilled(decision.value as Exclude<FloatDecision, 'send'>);
  });
}

export type RequeryOptions = {
  batchMax: number;
  /** A purchase the provider still does not know this long after it was sent never reached it: failed. */
  notFoundFailAfterSeconds: number;
  /** A purchase unresolved this long after acceptance raises one operations alert. */
  stuckAlertAfterSeconds: number;
  /**
   * A credit (airtime-to-cash) the provider has not confirmed this long after it was accepted fails,
   * with nothing moved (API.md section 14: 30 minutes by default, AIRTIME_TO_CASH_WINDOW_MINUTES).
   */
  creditConfirmWindowSeconds: number;
  /** Every processing purchase, not only those due (adminReconcile: "requery now"). */
  includeNotDue?: boolean;
};

export const requeryDefaults = {
  batchMax: 100,
  notFoundFailAfterSeconds: 15 * 60,
  stuckAlertAfterSeconds: 30 * 60,
  creditConfirmWindowSeconds: 30 * 60,
} as const satisfies RequeryOptions;

export type RequeryCounts = {
  checked: number;
  succeeded: number;
  failed: number;
  stillProcessing: number;
  /** Accepted but never sent (the process died between commit and dispatch): sent now. */
  dispatched: number;
  alerted: number;
};

/**
 * Requeries every purchase whose next requery is due (or which was never sent), oldest due first.
 * Runs as a job every minute, on the sandbox clock, and from adminReconcile.
 */
export async function requeryDuePurchases(
  deps: DispatchDeps,
  stages: SendStages,
  options: RequeryOptions,
): Promise<RequeryCounts> {
  const now = deps.clock.now();
  let query = deps.db.selectFrom('vtu_transactions').selectAll().where('status', '=', 'processing');
  if (options.includeNotDue !== true) query = query.where('next_requery_at', '<=', now);
  const due = await query
    .orderBy('next_requery_at', 'asc')
    .orderBy('id', 'asc')
    .limit(options.batchMax)
    .execute();
  return requeryPurchases(deps, stages, due, now, options);
}

/**
 * Requeries the provider about one purchase still processing, found by our reference (a provider's
 * callback says something changed: its body is never trusted, the provider is asked). Answers what
 * became of it, or null for no such purchase, or one already settled.
 */
export async function requeryByReference(
  deps: DispatchDeps,
  stages: SendStages,
  service: VtuService,
  reference: string,
  options: RequeryOptions,
): Promise<RequeryCounts | null> {
  const purchase = await deps.db
    .selectFrom('vtu_transactions')
    .selectAll()
    .where('reference', '=', reference)
    .where('service', '=', service)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  if (purchase === undefined || purchase.sent_at === null) return null;
  return requeryPurchases(deps, stages, [purchase], deps.clock.now(), options);
}

async function requeryPurchases(
  deps: DispatchDeps,
  stages: SendStages,
  due: VtuTransaction[],
  now: Date,
  options: RequeryOptions,
): Promise<RequeryCounts> {
  const counts: RequeryCounts = {
    checked: 0,
    succeeded: 0,
    failed: 0,
    stillProcessing: 0,
    dispatched: 0,
    alerted: 0,
  };
  for (const purchase of due) {
    counts.checked += 1;
    let result: DispatchResult;
    if (purchase.sent_at === null) {
      result = await dispatchPurchase(deps, stages, purchase.id);
      if (result !== 'already_sent' && result !== 'waiting') counts.dispatched += 1;
    } else {
      let outcome = await requery(deps, purchase);
      const sentFor = now.getTime() - purchase.sent_at.getTime();
      if (outcome.status === 'not_found' && sentFor >= options.notFoundFailAfterSeconds * 1000) {
        outcome = { status: 'failed', reason: 'the provider has no record of the purchase' };
      }
      outcome = outsideConfirmWindow(purchase, outcome, now, options);
      result = await stages.settle.add({ id: purchase.id, outcome });
    }
    if (result === 'success') counts.succeeded += 1;
    else if (result === 'failed') counts.failed += 1;
    else {
      counts.stillProcessing += 1;
      const age = now.getTime() - purchase.created_at.getTime();
      if (age >= options.stuckAlertAfterSeconds * 1000 && purchase.stuck_alerted_at === null) {
        await alertStuck(deps, purchase.id, Math.floor(age / 60_000));
        counts.alerted += 1;
      }
    }
  }
  return counts;
}

/**
 * A credit still unconfirmed once its window has passed fails: nothing was debited, so nothing moves
 * and nothing is owed. Should the airtime arrive after all, the provider's late confirmation finds
 * the sale settled, and operations sort it out with the provider.
 */
function outsideConfirmWindow(
  purchase: VtuTransaction,
  outcome: RequeryOutcome,
  now: Date,
  options: RequeryOptions,
): RequeryOutcome {
  if (purchase.direction !== 'credit' || outcome.status === 'success' || outcome.status === 'failed')
    return outcome;
  const age = now.getTime() - purchase.created_at.getTime();
  if (age < options.creditConfirmWindowSeconds * 1000) return outcome;
  const minutes = Math.round(options.creditConfirmWindowSeconds / 60);
  return {
    status: 'failed',
    reason: `the provider did not confirm receiving the airtime within ${minutes} minutes`,
  };
}

async function requery(deps: DispatchDeps, purchase: VtuTransaction): Promise<RequeryOutcome> {
  try {
    return await providerOf(deps, purchase.provider).requery({
      reference: purchase.reference,
      service: purchase.service as VtuService,
      providerReference: purchase.provider_reference,
    });
  } catch (error) {
    deps.logger?.warn({ err: error, reference: purchase.reference }, 'purchase requery failed');
    return { status: 'unknown', reason: `requery failed: ${(error as Error).message}` };
  }
}

const nothingReserved = (): void => {};

function providerOf(deps: DispatchDeps, name: string): VtuProvider {
  const provider = deps.providers[name];
  if (provider === undefined) throw new Error(`no VTU provider named ${name}`);
  return provider;
}
