import assert from 'node:assert/strict';
import type { Transaction } from 'kysely';
import type { Logger } from 'pino';
import { type BatcherOptions, type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { type WithCommit, writeWithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { decidePostings, InsufficientBalanceError, writePostings } from '../ledger/postings.ts';
import { koboToNaira } from '../money.ts';
import { admissionOf, type DebitRule } from './debit-rules.ts';
import { type DispatchDeps, dispatchPurchase, vtuDispatchJob } from './dispatch.ts';
import {
  chargeOf,
  firstRequeryAt,
  newPurchaseReference,
  type PurchaseOrder,
  purchasePostings,
  toView,
  type VtuTransactionView,
} from './purchases.ts';
import type { SettlementDeps } from './settlement.ts';

// Accepting a purchase (SPEC.md "What the service does" 2, API.md section 5): after the caller's
// checks (schema, auth, Tier 1, PIN, recipient, price: purchase-ops.ts), one database transaction
// debits the wallet into vtu_in_flight, records the purchase as processing, enqueues its dispatch
// job and writes the request's Idempotency-Key answer (the unit of work the handler gave). The
// purchase is then sent by this process right after the commit (dispatch.ts), so nobody waits on a
// queue's poll; the job is the safety net that sends it after a crash, or after a dispatch that
// failed here.
//
// The acceptances that arrive while a batch runs share the next batch's transaction (the group
// commit, batches.ts): a hundred purchases cost one debit statement, one INSERT and one job, not a
// hundred of each.

/** What a batch of acceptPurchases (its transaction) runs with. */
export type AcceptBatchDeps = SettlementDeps & {
  logger: Pick<Logger, 'warn'>;
  /** The purchase rules decided at debit time (debit-rules.ts). */
  debitRules: readonly DebitRule[];
};

/** One purchase waiting for its batch. */
export type AcceptRequest = {
  userId: string;
  order: PurchaseOrder;
  /** Made once per purchase, whatever the number of runs of the batches holding it. */
  id: string;
  reference: string;
  /** What commits with the acceptance: the request's Idempotency-Key answer, the purchase. */
  withCommit?: WithCommit | undefined;
};

/**
 * Purchases per batch at most: a transaction of a hundred purchases holds the in-flight account's
 * row lock for a few milliseconds, and a crowd larger than that waits for the next batch anyway.
 */
const acceptBatchMax = 100;

/**
 * The batches of acceptPurchases (batches.ts). A batch that threw may have committed (its COMMIT's
 * answer lost): running its purchases again blindly would debit and send them twice, so recovery
 * asks what was recorded (recoverAcceptances).
 */
export const acceptBatchOptions = (
  deps: AcceptBatchDeps,
): BatcherOptions<AcceptRequest, VtuTransactionView> => ({
  batchMax: acceptBatchMax,
  recover: (requests) => recoverAcceptances(deps, requests),
});

/**
 * What the accept stage (acceptPurchase, acceptPurchasesTogether) runs with: the dispatch stage it
 * hands each accepted purchase to, whose batches hold acceptPurchases's too.
 */
export type AcceptStageDeps = DispatchDeps & {
  /** The purchase rules decided at debit time, for the groups accepted outside the batches. */
  debitRules: readonly DebitRule[];
};

/**
 * Accepts a routed, priced and checked purchase, then sends it from this process right after the
 * commit. `withCommit` (the request's Idempotency-Key answer) is written by the acceptance's
 * transaction, and told once that transaction has committed. Answers the purchase, processing.
 */
export async function acceptPurchase(
  deps: AcceptStageDeps,
  userId: string,
  order: PurchaseOrder,
  withCommit?: WithCommit,
): Promise<VtuTransactionView> {
  // Under load a purchase waits here, not yet debited, for a place to be sent at once.
  await deps.sends.take();
  let sending = false;
  try {
    // The purchase's id and reference are made once, before it joins a batch: should the batch run
    // again, it meets its own unique references instead of becoming a second purchase.
    const accepted = await deps.batches.join(acceptPurchases, {
      userId,
      order,
      id: newId(),
      reference: newPurchaseReference(deps.clock.now()),
      withCommit,
    });
    // Resolved only once the batch's transaction, and the write that was to commit with it, committed.
    withCommit?.committed();
    deps.metrics?.purchaseCounted(order, 'accepted');
    deps.sends.track(accepted.id, sendAccepted(deps, accepted.id));
    sending = true;
    return accepted;
  } finally {
    if (!sending) deps.sends.release();
  }
}

/** Sends an accepted purchase from this process; a failure goes to the dispatch job. */
const sendAccepted = (deps: DispatchDeps, id: string): Promise<void> =>
  dispatchPurchase(deps, id).then(
    () => undefined,
    (error: unknown) => handToDispatchJob(deps, id, error),
  );

/**
 * Accepts a group of one buyer's purchases all or nothing (a bulk order's lines): one transaction
 * debits every one, records them, enqueues their dispatch job and writes `withCommit`'s answer for
 * the group's views, exactly as a batch of acceptPurchases does, except that a purchase the
 * wallet (or a debit rule) refuses refuses the group: the transaction rolls back, nothing is
 * debited, and the caller gets the refusal (INSUFFICIENT_FUNDS for the group's total). The debits
 * are decided on the wallet read under its lock (decidePostings), so two groups of one buyer that
 * each fit alone but not together are decided one after the other: one is accepted whole, the
 * other refused whole. The group skips the batches: it is a batch already, and running it inside
 * another would let a line's refusal roll back strangers' purchases.
 *
 * `references` are given by a caller that derives them from what it runs (a schedule's run), so that
 * a second attempt meets the first's unique reference instead of becoming a second purchase; its
 * unit of work may then refuse the group (a claim taken over) without touching anyone else's.
 *
 * Each purchase is then its own (its reference, its outcome, its refund), sent from this process as
 * places to send come free (the first on the place the group waited for); the job is the safety net
 * as for every acceptance.
 */
export async function acceptPurchasesTogether(
  deps: AcceptStageDeps,
  userId: string,
  orders: PurchaseOrder[],
  withCommit?: WithCommit,
  references?: readonly string[],
): Promise<VtuTransactionView[]> {
  assert.ok(orders.length > 0, 'a group of purchases holds at least one');
  assert.ok(references === undefined || references.length === orders.length, 'a reference per purchase');
  assert.ok(orders.length <= acceptBatchMax, `a group holds at most ${acceptBatchMax} purchases`);
  assert.ok(
    orders.every((order) => order.direction !== 'credit'),
    'a group holds debits only: a credit has nothing to refuse it',
  );
  // Under load a group waits here, not yet debited, for a place to send its first line: behind the
  // lines of the groups accepted before it, which queue for their places (InlineSends is first come,
  // first served). So groups are accepted no faster than their lines are sent, as single purchases
  // are, instead of piling up lines in processing.
  await deps.sends.take();
  let sending = false;
  try {
    const now = deps.clock.now();
    const requests: AcceptRequest[] = orders.map((order, i) => ({
      userId,
      order,
      id: newId(),
      reference: references?.[i] ?? newPurchaseReference(now),
    }));
    const rows = requests.map((request) => purchaseRow(request, now));
    const views = rows.map((row) => toView(acceptedRow(row)));
    try {
      await deps.db.transaction().execute(async (trx) => {
        const decided = await decideDebits(deps, trx, rows, now, requests[0]!.id);
        const refused = decided.decisions.find((decision) => decision instanceof Error);
        if (refused !== undefined) {
          if (!(refused instanceof InsufficientBalanceError)) throw refused;
          throw insufficientFunds(rows.reduce((sum, row) => sum + row.amount, 0n));
        }
        await recordAccepted(deps, trx, rows, now);
        if (withCommit !== undefined) await writeWithCommit(trx, [withCommit.writeFor(views)]);
        for (const debit of await writePostings(trx, decided)) {
          if (debit.status === 'rejected') throw debit.reason;
        }
      });
    } catch (error) {
      // A COMMIT whose answer was lost throws like a rollback: the group stands if it was recorded.
      if (!(await wereRecorded(deps, requests))) throw error;
      deps.logger.warn(
        { ids: views.map((view) => view.id) },
        'purchase group threw after its commit; it stands',
      );
    }
    withCommit?.committed();
    for (const order of orders) deps.metrics?.purchaseCounted(order, 'accepted');
    const [first, ...rest] = views;
    deps.sends.track(first!.id, sendAccepted(deps, first!.id));
    sending = true;
    for (const view of rest) deps.sends.queue(view.id, () => sendAccepted(deps, view.id));
    return views;
  } finally {
    if (!sending) deps.sends.release();
  }
}

/** Whether the group's purchases were recorded (a transaction records all of them or none). */
async function wereRecorded(deps: Pick<AcceptStageDeps, 'db'>, requests: AcceptRequest[]): Promise<boolean> {
  const found = await deps.db
    .selectFrom('vtu_transactions')
    .select('id')
    .where('id', '=', requests[0]!.id)
    .executeTakeFirst()
    .catch(() => undefined);
  return found !== undefined;
}

const insufficientFunds = (kobo: bigint): AppError => {
  const naira = koboToNaira(kobo);
  return new AppError('INSUFFICIENT_FUNDS', `your wallet does not cover ₦${naira}`, {
    details: { required: naira },
  });
};

/**
 * A dispatch after acceptance that failed (a claim or a settlement that threw: the database, a bug)
 * is handed to the dispatch job, which pg-boss runs and retries with backoff. The acceptance's own
 * job may already have run, finding the purchase in this dispatch's hands. Should even this enqueue
 * fail, the requery runner sends a purchase never sent, and requeries one sent, at its
 * next_requery_at.
 */
async function handToDispatchJob(
  deps: Pick<DispatchDeps, 'jobs' | 'logger'>,
  id: string,
  error: unknown,
): Promise<void> {
  deps.logger.warn({ err: error, id }, 'purchase dispatch after acceptance failed; handed to its job');
  try {
    await deps.jobs.send(vtuDispatchJob, { ids: [id] });
  } catch (enqueueError) {
    deps.logger.error(
      { err: enqueueError, id },
      'a failed purchase dispatch could not be handed to its job; the requery runner sends it',
    );
  }
}

/**
 * Accepts many purchases in one transaction (a batch, batches.ts): the debits are
 * decided one by one in arrival order, as if each had its own transaction, so a wallet that covers
 * two of three purchases accepts the first two; then the accepted purchases are recorded by one
 * INSERT, their dispatch enqueued as one durable job, their Idempotency-Key answers written, and
 * their debits written by one statement.
 */
export async function acceptPurchases(
  deps: AcceptBatchDeps,
  requests: AcceptRequest[],
): Promise<BatchResults<VtuTransactionView>> {
  const now = deps.clock.now();
  const rows = requests.map((request) => purchaseRow(request, now));
  // Credits (airtime-to-cash) debit nothing: only the debits are decided against the wallets.
  const debitRows = rows.filter((row) => row.direction === 'debit');
  return deps.db.transaction().execute(async (trx) => {
    const decided = await decideDebits(deps, trx, debitRows, now);
    const debitIndex = new Map(debitRows.map((row, j) => [row.id, j]));
    const isAccepted = rows.map((row) => {
      const j = debitIndex.get(row.id);
      return j === undefined || decided.accepted[j] === true;
    });
    const accepted = rows.filter((_, i) => isAccepted[i]);
    const views = rows.map((row) => toView(acceptedRow(row)));
    if (accepted.length > 0) {
      await recordAccepted(deps, trx, accepted, now);
      await writeWithCommit(
        trx,
        requests.flatMap(({ withCommit }, i) =>
          isAccepted[i] && withCommit !== undefined ? [withCommit.writeFor(views[i])] : [],
        ),
      );
    }
    // The debits last: vtu_in_flight, in every purchase's debit and settlement, is locked from here
    // to the commit only.
    const debits = await writePostings(trx, decided);
    return rows.map((row, i): PromiseSettledResult<VtuTransactionView> => {
      const j = debitIndex.get(row.id);
      if (j === undefined) return fulfilled(views[i]!);
      const debit = debits[j]!;
      if (debit.status === 'fulfilled') return fulfilled(views[i]!);
      if (!(debit.reason instanceof InsufficientBalanceError)) return debit;
      return rejected(insufficientFunds(row.amount));
    });
  });
}

/**
 * Decides the purchases' debits (wallet into vtu_in_flight) under the buyers' wallet locks, in
 * order, with the debit rules: written later by writePostings, last in the transaction.
 */
async function decideDebits(
  deps: AcceptBatchDeps,
  trx: Transaction<DB>,
  debitRows: PurchaseRow[],
  now: Date,
  /** The group's name when the rows are accepted or refused whole (acceptPurchasesTogether). */
  group?: string,
) {
  // The purchase rules that need state at debit time (debit-rules.ts), decided with the debits.
  const admission = admissionOf(
    deps.debitRules,
    trx,
    debitRows.map((row) => ({
      userId: row.user_id,
      service: row.service,
      amountKobo: row.amount,
      ...(group === undefined ? {} : { group }),
    })),
    now,
  );
  const decided = await decidePostings(
    trx,
    debitRows.map((row) => ({
      reference: purchasePostings.debit(row.reference),
      description: row.description,
      entries: [
        { account: userAccount('wallet', row.user_id), amount: -row.amount },
        { account: systemAccounts.vtuInFlight, amount: row.amount },
      ],
      metadata: { purchaseId: row.id, service: row.service, provider: row.provider },
    })),
    now,
    {
      // Each reference was made at random for this purchase. Were it posted by an earlier run of
      // the batch that committed, recording the purchase again fails first (its id is taken).
      referencesUnposted: true,
      admission,
      shards: deps.ledgerShards,
    },
  );
  // What the rules counted (the day's debits, API.md 17.2), for the purchases accepted: written
  // before the debits, still under the wallets' locks. A group refused whole rolls it back with them.
  await admission?.save(decided.accepted);
  return decided;
}

/** Records accepted purchases, processing, and enqueues their dispatch's safety net, in the transaction. */
async function recordAccepted(
  deps: Pick<AcceptBatchDeps, 'jobs'>,
  trx: Transaction<DB>,
  rows: PurchaseRow[],
  now: Date,
): Promise<void> {
  await recordPurchases(trx, rows, now);
  // The safety net after a crash: one job sends whatever of them was not sent by then.
  await deps.jobs.insert(vtuDispatchJob, [{ data: { ids: rows.map((row) => row.id) } }], { db: trx });
}

/**
 * Answers a batch of acceptances whose transaction threw. It may have committed all the same (a
 * COMMIT whose answer was lost), and a transaction is all or nothing: each purchase recorded was
 * accepted by it, and gets its view. Each purchase not recorded was not accepted (the batch rolled
 * back, or refused it) and runs again alone, as if it had just arrived. Should a COMMIT still be in
 * progress while this looks, the run alone meets the purchase's own id and fails: the caller gets a
 * 5xx, and its Idempotency-Key, completed by that commit, replays the one answer.
 */
async function recoverAcceptances(
  deps: AcceptBatchDeps,
  requests: AcceptRequest[],
): Promise<BatchResults<VtuTransactionView>> {
  const recorded = new Map(
    (
      await deps.db
        .selectFrom('vtu_transactions')
        .selectAll()
        .where(
          'id',
          'in',
          requests.map((request) => request.id),
        )
        .execute()
    ).map((row) => [row.id, row]),
  );
  const results: BatchResults<VtuTransactionView> = [];
  for (const request of requests) {
    const row = recorded.get(request.id);
    if (row !== undefined) {
      deps.logger.warn({ id: row.id }, 'purchase batch threw after its commit; the purchase stands');
      results.push(fulfilled(toView(row)));
      continue;
    }
    try {
      const [alone] = await acceptPurchases(deps, [request]);
      results.push(alone ?? rejected(new Error('an acceptance answered no result')));
    } catch (error) {
      results.push(rejected(error));
    }
  }
  return results;
}

type PurchaseRow = ReturnType<typeof purchaseRow>;

/** The row of a purchase about to be accepted: processing, its id and reference made on arrival. */
function purchaseRow({ userId, order, id, reference }: AcceptRequest, now: Date) {
  const { amountKobo, ...rest } = order.request as { amountKobo?: bigint };
  const storedRequest = {
    ...rest,
    ...(amountKobo === undefined ? {} : { amountKobo: amountKobo.toString() }),
  };
  return {
    id,
    user_id: userId,
    reference,
    service: order.service,
    provider: order.provider,
    network: order.network,
    recipient: order.recipient,
    request: JSON.stringify(storedRequest),
    description: order.description,
    direction: order.direction ?? ('debit' as const),
    // What moves on the wallet: a debit's price, a credit's payout.
    amount: order.direction === 'credit' ? order.creditKobo! : chargeOf(order),
    wholesale: order.wholesaleKobo,
    markup: order.markupKobo,
    status: 'processing' as const,
    customer_name: order.customerName ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** The row as recorded: nothing delivered, nothing failed yet. */
const acceptedRow = (row: PurchaseRow) => ({
  ...row,
  refunded: 0n,
  token: null,
  units: null,
  pins: null,
  failure_reason: null,
});

/**
 * Records accepted purchases, processing, with one statement whose text does not vary with their
 * number (the columns go in as arrays): prepared once per connection.
 */
async function recordPurchases(trx: Transaction<DB>, rows: PurchaseRow[], now: Date): Promise<void> {
  const column = <K extends keyof PurchaseRow>(key: K) => rows.map((row) => row[key]);
  // Picked up by the requery runner should both the inline dispatch and its job be lost.
  await statement('vtu.record-purchases')`
    insert into vtu_transactions (id, user_id, reference, service, provider, network, recipient, request,
      description, direction, amount, wholesale, markup, customer_name, status, next_requery_at,
      created_at, updated_at)
    select r.id, r.user_id, r.reference, r.service, r.provider, r.network, r.recipient, r.request::jsonb,
      r.description, r.direction, r.amount, r.wholesale, r.markup, r.customer_name, 'processing',
      ${firstRequeryAt(now)}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
    from unnest(${column('id')}::uuid[], ${column('user_id')}::uuid[], ${column('reference')}::text[],
      ${column('service')}::text[], ${column('provider')}::text[], ${column('network')}::text[],
      ${column('recipient')}::text[], ${column('request')}::text[], ${column('description')}::text[],
      ${column('direction')}::text[], ${column('amount')}::bigint[], ${column('wholesale')}::bigint[],
      ${column('markup')}::bigint[], ${column('customer_name')}::text[])
      with ordinality as r(id, user_id, reference, service, provider, network, recipient, request,
        description, direction, amount, wholesale, markup, customer_name, position)
    order by r.position`.execute(trx);
}
