import assert from 'node:assert/strict';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { BulkOrdersTable, DB } from '../db/schema.ts';
import { type CommitWrite, type WithCommit, writeWithCommit } from '../db/unit-of-work.ts';
import { AppError, type ErrorCode, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import { newestFirstPage } from '../paging.ts';
import { localPhone } from '../shared/prefixes.ts';
import type { PurchaseOrder, VtuApi, VtuTransactionView } from '../vtu/module.ts';
import type {
  BulkLine,
  BulkOrderView,
  BulkPreview,
  BulkService,
  CreateBulkOrderRequest,
  PreviewBulkOrderRequest,
  Refusal,
} from './schemas.ts';

// Bulk orders (API.md section 16, issue 28): one person's airtime or data for up to 100 numbers.
//
// Every line is checked the way its own purchase is, through the vtu module's api: authorise (Tier 1
// and the PIN, once for the order) and orderFor (the line's recipient, amount bounds, plan and price
// for this buyer). An order with a line its purchase would refuse is refused whole, as is one whose
// `total` is not what the lines cost now, before anything is debited. The lines are then accepted
// together by the purchase pipeline (vtu's buyTogether): one transaction that debits every line or
// none, decided on the wallet read under its lock, and that also writes this order's row and its
// Idempotency-Key answer, so the order, its debits and its stored answer commit together. After
// that each line is its own purchase with its own reference, outcome and refund.
//
// The order keeps only which purchase each line became; its lines' states, what they were charged
// and what failed lines got back are read from the purchases through vtu's api, so they are never
// a copy that could disagree with the ledger. Its status is `processing` while any line is, then
// `completed`: every line then succeeded or failed (and was refunded).

export type BulkOrderDeps = {
  db: Kysely<DB>;
  clock: Clock;
  vtu: Pick<VtuApi, 'authorise' | 'requireOpen' | 'orderFor' | 'buyTogether' | 'purchasesOf' | 'chargeOf'>;
};

/**
 * Refusals that are not a line's: the buyer's tier (every line's alike), a provider's catalogue
 * out of reach (nobody's fault, and no answer about any line) and an operator's pause of the service
 * (decision 0042). They refuse the request itself.
 */
const notALinesRefusal: ReadonlySet<string> = new Set([
  'KYC_TIER_REQUIRED',
  'UPSTREAM_UNAVAILABLE',
  'SERVICE_PAUSED',
]);

/** What a line's purchase would be refused with: a code of API.md section 2. */
type LineRefusal = Refusal & { code: ErrorCode };

type LineCheck = { phone: string; order: PurchaseOrder } | { phone: string; refusal: LineRefusal };

/** Each line's purchase checked and priced for this buyer, as its operation would, in the order given. */
async function checkLines(
  deps: BulkOrderDeps,
  userId: string,
  service: BulkService,
  lines: BulkLine[],
): Promise<LineCheck[]> {
  return Promise.all(
    lines.map(async (line): Promise<LineCheck> => {
      const phone = localPhone(line.phone);
      try {
        const order =
          service === 'data'
            ? await deps.vtu.orderFor(userId, 'data', {
                network: line.network,
                phone: line.phone,
                amount: line.amount,
                plan_id: line.plan_id!,
              })
            : await deps.vtu.orderFor(userId, 'airtime', {
                network: line.network,
                phone: line.phone,
                amount: line.amount,
              });
        return { phone, order };
      } catch (error) {
        if (!(error instanceof AppError) || notALinesRefusal.has(error.code)) throw error;
        return {
          phone,
          refusal: {
            code: error.code,
            message: error.message,
            ...(error.details === undefined ? {} : { details: error.details }),
          },
        };
      }
    }),
  );
}

/** What each line would be refused with, and what the lines that pass cost together now. No PIN, no debit. */
export async function previewBulkOrder(
  deps: BulkOrderDeps,
  userId: string,
  request: PreviewBulkOrderRequest,
): Promise<BulkPreview> {
  // A paused service refuses the order whole, as it would every line.
  await deps.vtu.requireOpen(request.service);
  const checks = await checkLines(deps, userId, request.service, request.lines);
  let totalKobo = 0n;
  const lines = checks.map((check) => {
    if ('refusal' in check) return { phone: check.phone, ok: false, refusal: check.refusal };
    totalKobo += deps.vtu.chargeOf(check.order);
    return { phone: check.phone, ok: true, amount: koboToNaira(deps.vtu.chargeOf(check.order)) };
  });
  return { lines, total: koboToNaira(totalKobo) };
}

/**
 * Buys every line or none: PIN and Tier 1 first, then every line's checks, then the total, then the
 * debits of all lines together under the wallet's lock. Answers the order, its lines processing.
 */
export async function createBulkOrder(
  deps: BulkOrderDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  request: CreateBulkOrderRequest,
): Promise<BulkOrderView> {
  // A paused service refuses the order whole, before the PIN, as each of its purchases would.
  await deps.vtu.requireOpen(request.service);
  await deps.vtu.authorise(userId, request.pin);
  const checks = await checkLines(deps, userId, request.service, request.lines);
  const refused = checks.flatMap((check, index) =>
    'refusal' in check ? [{ index, phone: check.phone, ...check.refusal }] : [],
  );
  if (refused.length > 0) {
    // The first refused line's own code, so a single bad line reads as its purchase would; every
    // refused line is listed, in order, with its code.
    const first = refused[0]!;
    throw new AppError(
      first.code,
      `${refused.length} of ${checks.length} lines would be refused (line ${first.index + 1}: ${first.message}); nothing was charged`,
      { details: { lines: refused } },
    );
  }
  const orders = checks.map((check) => (check as { order: PurchaseOrder }).order);
  const totalKobo = orders.reduce((sum, order) => sum + deps.vtu.chargeOf(order), 0n);
  if (nairaToKobo(request.total) !== totalKobo) {
    throw new AppError('PRICE_CHANGED', `the lines cost ₦${koboToNaira(totalKobo)} together now`, {
      details: { amount: koboToNaira(totalKobo) },
    });
  }
  const row = {
    id: newId(),
    user_id: userId,
    service: request.service,
    total: totalKobo,
    created_at: deps.clock.now(),
  };
  let answered: BulkOrderView | undefined;
  const purchases = await deps.vtu.buyTogether(userId, orders, {
    writeFor(result) {
      const views = result as VtuTransactionView[];
      const lines = views.map((view, i) => ({ phone: checks[i]!.phone, transactionId: view.id }));
      answered = orderView({ ...row, lines }, new Map(views.map((view) => [view.id, view])));
      return writeOrderFor({ ...row, lines }, withCommit?.writeFor(answered));
    },
    committed() {
      withCommit?.committed();
    },
  });
  assert.equal(purchases.length, orders.length, 'every line of an accepted order is a purchase');
  assert.ok(answered !== undefined, 'the order was written with its lines');
  return answered;
}

type StoredLine = { phone: string; transactionId: string };
type OrderRow = Omit<Selectable<BulkOrdersTable>, 'lines'> & { lines: StoredLine[] };
type OrderWrite = { row: OrderRow; answer: CommitWrite | undefined };

/** The order's row, and its Idempotency-Key answer, to write in the transaction that debits its lines. */
const writeOrderFor = (row: OrderRow, answer: CommitWrite | undefined): CommitWrite => ({
  writer: writeOrders,
  row: { row, answer } satisfies OrderWrite,
});

async function writeOrders(trx: Transaction<DB>, writes: OrderWrite[]): Promise<void> {
  await trx
    .insertInto('bulk_orders')
    .values(writes.map(({ row }) => ({ ...row, lines: JSON.stringify(row.lines) })))
    .execute();
  await writeWithCommit(
    trx,
    writes.flatMap(({ answer }) => (answer === undefined ? [] : [answer])),
  );
}

/** The order as its lines' purchases stand now. */
function orderView(row: OrderRow, purchases: Map<string, VtuTransactionView>): BulkOrderView {
  const counts = { processing: 0, success: 0, failed: 0 };
  let chargedKobo = 0n;
  let refundedKobo = 0n;
  const lines = row.lines.map(({ phone, transactionId }) => {
    const purchase = purchases.get(transactionId);
    assert.ok(purchase !== undefined, `the purchase ${transactionId} of a bulk order's line exists`);
    counts[purchase.status] += 1;
    // Naira of two decimals: summed in kobo, so no float sum drifts.
    chargedKobo += nairaToKobo(purchase.amount);
    refundedKobo += nairaToKobo(purchase.status === 'failed' ? purchase.amount : (purchase.refunded ?? 0));
    return { phone, transactionId, status: purchase.status, amount: purchase.amount };
  });
  return {
    id: row.id,
    service: row.service as BulkService,
    status: counts.processing > 0 ? 'processing' : 'completed',
    lines,
    counts,
    total: koboToNaira(row.total),
    charged: koboToNaira(chargedKobo),
    refunded: koboToNaira(refundedKobo),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Each order with its lines' purchases, read through vtu's api in one call. */
async function viewsOf(deps: BulkOrderDeps, userId: string, rows: OrderRow[]): Promise<BulkOrderView[]> {
  const ids = rows.flatMap((row) => row.lines.map((line) => line.transactionId));
  const purchases = await deps.vtu.purchasesOf(userId, ids);
  const byId = new Map(purchases.map((view) => [view.id, view]));
  return rows.map((row) => orderView(row, byId));
}

const stored = (row: Selectable<BulkOrdersTable>): OrderRow => ({
  ...row,
  lines: (typeof row.lines === 'string' ? JSON.parse(row.lines) : row.lines) as StoredLine[],
});

/** One of the caller's orders; another user's, or an unknown id, is 404. */
export async function getBulkOrder(deps: BulkOrderDeps, userId: string, id: string): Promise<BulkOrderView> {
  const row = await deps.db
    .selectFrom('bulk_orders')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) throw notFound('bulk order');
  const [view] = await viewsOf(deps, userId, [stored(row)]);
  return view!;
}

/** The caller's orders, newest first (ids are UUIDv7: they order ties), with the total. */
export async function listBulkOrders(
  deps: BulkOrderDeps,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ items: BulkOrderView[]; limit: number; offset: number; total: number }> {
  const mine = deps.db.selectFrom('bulk_orders').where('user_id', '=', userId);
  const { rows, total } = await newestFirstPage(mine, page);
  return {
    items: await viewsOf(deps, userId, rows.map(stored)),
    limit: page.limit,
    offset: page.offset,
    total,
  };
}
