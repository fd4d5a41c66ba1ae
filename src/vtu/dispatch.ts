import type { Logger } from 'pino';
import { z } from 'zod';
import { type BatcherOptions, type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import { defineJob } from '../jobs/job.ts';
import {
  type PurchaseOutcome,
  type PurchaseRequest,
  type VtuProvider,
  VtuRefusedLocally,
} from '../providers/vtu/vtu-provider.ts';
import type { PurchaseBatches } from './batches.ts';
import {
  claimWithinFloat,
  type FloatDecision,
  type FloatDeps,
  type FloatPlan,
  floatDecisions,
  purchasesWaitingFor,
} from './float.ts';
import { type ProviderRates, takeTurns, waitForTurn } from './provider-rate.ts';
import { firstRequeryAfterSeconds, firstRequeryAt, type VtuTransaction } from './purchases.ts';
import { type SettlementDeps, type SettleResult, settlePurchases } from './settlement.ts';

// Sending a purchase to its provider (the dispatch stage). The provider is called at most once per
// purchase: dispatch claims the row (sent_at) in one conditional UPDATE before the call, so the
// inline run after acceptance, the durable job and the requery runner can race and only one sends.
// Whatever happens after the claim (an answer, a timeout, a crash) is settled by requery under the
// same reference. The answer goes to the settlement stage (settlement.ts).

/**
 * The safety net of every acceptance (accept.ts): sends what the accepting process did not, of the
 * purchases one transaction accepted.
 */
export const vtuDispatchJob = defineJob('vtu.dispatch', z.object({ ids: z.array(z.uuid()).min(1) }));

/** What a claim works with: the providers, and just-in-time funding of their floats (float.ts). */
export type ClaimDeps = SettlementDeps & {
  providers: Record<string, VtuProvider>;
  /** Just-in-time funding of the providers' floats; without it purchases are sent as they come. */
  float?: FloatDeps;
  /** Each provider's sends per second across every process (provider-rate.ts); without it, no limit. */
  providerRates?: ProviderRates;
};

/** The dispatch stage: the group commit of its claims and of the settlements it hands answers to, and its bound. */
export type DispatchDeps = ClaimDeps & {
  logger: Pick<Logger, 'warn' | 'error'>;
  /** The purchase path's batches (batches.ts): claimPurchases's and settlePurchases's among them. */
  batches: PurchaseBatches;
  /** The purchases this process is sending right after accepting them (createInlineSends). */
  sends: InlineSends;
};

/** Purchases claimed per statement at most. */
const claimBatchMax = 100;
/**
 * Claims touch no shared row, so several run at once: a claim waiting on one purchase's row lock (a
 * settlement of it in progress) must not hold up every other send of the process.
 */
const claimConcurrency = 4;

/** The batches of claimPurchases (batches.ts): the purchases asked for while a claim runs share the next. */
export const claimBatchOptions: BatcherOptions<string, Claim> = {
  batchMax: claimBatchMax,
  concurrency: claimConcurrency,
};

// The purchases a process sends right after accepting them, bounded. Accepting faster than purchases
// can be sent only lengthens every purchase's time in processing (on PGlite's one connection, each
// send's claim and settlement queue behind the accepts): under load a new purchase waits for a place
// before its transaction (acceptPurchase), so the wait is the client's, on its request, and a
// purchase accepted is sent at once. One per module (config.vtu.sendsMax places).

export type InlineSends = {
  /** Resolves when a place is this caller's; give it back with release(). */
  take(): Promise<void>;
  release(): void;
  /** Purchases checked and waiting for a place, not debited yet (what the bound holds back now). */
  waiting(): number;
  /** Runs a send, tracked until it ends; its place is given back then. */
  track(id: string, send: Promise<void>): void;
  /**
   * A send of a purchase accepted before it had a place (a group's lines, accepted together): it
   * waits for a place after the commit, then runs, tracked from now until it ends.
   */
  queue(id: string, start: () => Promise<void>): void;
  /** Resolves when this process's send of the purchase (if any) has ended. */
  ended(id: string): Promise<void>;
  /** Resolves when every send under way has ended (graceful shutdown). */
  allEnded(): Promise<void>;
};

export function createInlineSends(max: number): InlineSends {
  let inUse = 0;
  const waiting: Array<() => void> = [];
  const running = new Map<string, Promise<void>>();
  const sends: InlineSends = {
    async take() {
      if (inUse < max) {
        inUse += 1;
        return;
      }
      // The place is handed over by release, never counted twice.
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    release() {
      const next = waiting.shift();
      if (next !== undefined) next();
      else inUse -= 1;
    },
    waiting: () => waiting.length,
    track(id, send) {
      running.set(
        id,
        send.finally(() => {
          running.delete(id);
          sends.release();
        }),
      );
    },
    queue(id, start) {
      running.set(
        id,
        sends
          .take()
          .then(start)
          .finally(() => {
            running.delete(id);
            sends.release();
          }),
      );
    },
    async ended(id) {
      await running.get(id);
    },
    async allEnded() {
      await Promise.allSettled([...running.values()]);
    },
  };
  return sends;
}

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
  | { purchase: ClaimedPurchase }
  | 'already_sent'
  | Exclude<FloatDecision, 'send'>
  /** Over its provider's rate: not claimed, to be claimed again at turnAt (provider-rate.ts). */
  | { turnAt: Date };

/**
 * Sends a purchase not sent yet and settles it on the answer: 'already_sent' when another run did,
 * 'waiting' when its provider's float is being topped up first (it is dispatched again then). The
 * claim and the settlement go through the group commit (their batchers): under load one statement
 * claims many purchases and one transaction settles many answers.
 */
export async function dispatchPurchase(deps: DispatchDeps, id: string): Promise<DispatchResult> {
  let claim = await deps.batches.join(claimPurchases, id);
  // Over its provider's rate it waits its turn, keeping its place among this process's sends.
  while (typeof claim === 'object' && 'turnAt' in claim) {
    await waitForTurn(deps.clock, claim.turnAt);
    claim = await deps.batches.join(claimPurchases, id);
  }
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
      deps.logger.error({ err: error, id }, 'purchase dispatch failed');
    }
  }
  // The float the claim reserved is released by the settlement that ends the purchase (settlement.ts).
  return deps.batches.join(settlePurchases, { id, outcome });
}

/** Sends the purchases that waited for the float top-up with this reference, now that it settled. */
export async function dispatchPurchasesWaitingFor(deps: DispatchDeps, topUpReference: string): Promise<void> {
  // Together, so that one claim decides the float for all of them.
  const waiting = await purchasesWaitingFor(deps, topUpReference);
  await Promise.all(waiting.map((id) => dispatchPurchase(deps, id)));
}

/**
 * Claims for sending the purchases not sent yet: decides each provider's float once for the lot,
 * then marks them sent (sent_at) in one conditional UPDATE, which only one of several racing runs
 * (the inline dispatch, the durable job, the requery runner) can win for each purchase.
 */
export async function claimPurchases(deps: ClaimDeps, ids: string[]): Promise<BatchResults<Claim>> {
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
  const plans = new Map<string, FloatPlan>();
  for (const [name, purchases] of Map.groupBy(debits, (p) => p.provider)) {
    const provider = providerOf(deps, name);
    try {
      const { decisions, plan } =
        deps.float === undefined
          ? { decisions: purchases.map((): FloatDecision => 'send'), plan: undefined }
          : await floatDecisions(deps.float, provider, purchases);
      if (plan !== undefined) plans.set(name, plan);
      for (const [i, p] of purchases.entries()) decided.set(p.id, fulfilled(decisions[i]!));
    } catch (error) {
      for (const p of purchases) decided.set(p.id, rejected(error));
    }
  }
  const allowed = unsent.filter((p) => {
    const decision = decided.get(p.id);
    return decision?.status === 'fulfilled' && decision.value === 'send';
  });
  // Those over their provider's rate wait for its next second, unclaimed.
  const { sending: toSend, waiting: turns } = await takeTurns(deps.providerRates, allowed);
  let claimed: ClaimedPurchase[] = [];
  if (toSend.length > 0) {
    const now = deps.clock.now();
    // The first requery comes a minute after the send. A purchase sent right after its acceptance
    // keeps the minute from its acceptance: its row is then rewritten in place, no index touched
    // (migration 2026-11-24T1300). One sent later (after a top-up, by its job) gets its minute anew.
    const requeryNotBefore = new Date(now.getTime() + (firstRequeryAfterSeconds / 2) * 1000);
    // The float is decided again, and reserved, in the claim's transaction (float.ts).
    const within = await claimWithinFloat(
      deps,
      plans,
      toSend,
      async (db, ids, reserving) =>
        (
          await statement<ClaimedPurchase>('vtu.claim')`
            update vtu_transactions set sent_at = ${now}::timestamptz, updated_at = ${now}::timestamptz,
              next_requery_at = case when next_requery_at < ${requeryNotBefore}::timestamptz
                then ${firstRequeryAt(now)}::timestamptz else next_requery_at end,
              float_reserved_kobo = case when ${reserving}::boolean and direction = 'debit' then wholesale else 0 end
            where id = any(${ids}::uuid[]) and status = 'processing' and sent_at is null
            returning id, provider, reference, request`.execute(db)
        ).rows,
    );
    claimed = within.claimed;
    for (const [id, decision] of within.decided) decided.set(id, decision);
  }
  const byId = new Map(claimed.map((p) => [p.id, p]));
  return ids.map((id): PromiseSettledResult<Claim> => {
    const purchase = byId.get(id);
    if (purchase !== undefined) {
      // The first asker of an id sends it; a repeat of the id in the batch finds it sent.
      byId.delete(id);
      return fulfilled({ purchase });
    }
    const turnAt = turns.get(id);
    if (turnAt !== undefined) return fulfilled({ turnAt });
    const decision = decided.get(id);
    if (decision === undefined || (decision.status === 'fulfilled' && decision.value === 'send'))
      return fulfilled('already_sent');
    return decision.status === 'rejected'
      ? decision
      : fulfilled(decision.value as Exclude<FloatDecision, 'send'>);
  });
}

/** The adapter of a provider by its configuration name, read when called (tests replace its methods). */
export function providerOf(deps: Pick<ClaimDeps, 'providers'>, name: string): VtuProvider {
  const provider = deps.providers[name];
  if (provider === undefined) throw new Error(`no VTU provider named ${name}`);
  return provider;
}
