import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { DB, VtuTransactionsTable } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { type DateRange, lagosMinute } from '../lagos-time.ts';
import { koboToNaira } from '../money.ts';
import { newestFirstPage } from '../paging.ts';
import type { PurchaseRequest, VtuService } from '../providers/vtu/vtu-provider.ts';

// A purchase's record (vtu_transactions) and what every stage of its path knows of it: its order,
// its reference and the references of its postings, when the requery runner first looks at it, and
// the view of it the client gets. The stages build on this file and never the other way round:
//
//   purchase-ops.ts  the checks, then acceptPurchase
//   accept.ts        acceptPurchase: the debit, the record and the dispatch job in one transaction
//   dispatch.ts      dispatchPurchase: claim, (float.ts: fund the provider first), send
//   settlement.ts    settlePurchases: what the answer does to the purchase and the money
//   requery.ts       requeryDuePurchases: the purchases whose outcome is still unknown

export type VtuTransaction = Selectable<VtuTransactionsTable>;

/** A purchase ready to accept: routed, priced and checked. */
export type PurchaseOrder = {
  service: VtuService;
  provider: string;
  network: string | null;
  /** What the user sees as the recipient (phone, meter, IUC, customer id, link). */
  recipient: string;
  /** The provider request without its reference, which is made on acceptance. */
  request: DistributiveOmit<PurchaseRequest, 'reference'>;
  wholesaleKobo: bigint;
  markupKobo: bigint;
  description: string;
  /**
   * `credit` (airtime-to-cash): nothing is debited on acceptance; the wallet is credited
   * `creditKobo` once the provider confirms (settlement.ts). `wholesaleKobo` is then the airtime's
   * face value and `markupKobo` zero. Default `debit`.
   */
  direction?: 'debit' | 'credit';
  /** A credit's payout. */
  creditKobo?: bigint;
  /** Whose meter, smartcard or betting account it is, as a look-up by the provider just named them. */
  customerName?: string;
};

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What a debit order takes from the wallet: its wholesale price and its markup. */
export const chargeOf = (order: Pick<PurchaseOrder, 'wholesaleKobo' | 'markupKobo'>): bigint =>
  order.wholesaleKobo + order.markupKobo;

// A purchase's reference is ours: it is the ledger's reference for the purchase and what every
// requery looks the order up by, whichever provider the purchase is routed to. So it is made here,
// in one form every provider takes. VTpass's is the narrowest (shared/reference/providers.md section
// 2): its request_id starts with the date and time to the minute in Lagos, YYYYMMDDHHmm, then
// letters and digits, and a stale one is refused (085). The data vendor takes any non-empty `ident`
// and the SMM panel takes no reference of ours, so a reference of VTpass's form suits all three.
// The adapters keep checking what they are given (isVtpassRequestId); test/vtu/references.test.ts
// holds this form to that rule.

/** The suffix's length at most, as the VTpass client checks it: 50 characters in all with the minute. */
const suffixLengthMax = 38;
const suffixPattern = new RegExp(`^[A-Za-z0-9]{1,${suffixLengthMax}}$`);
/** Random bytes per reference, written as hex: 80 bits, unique without asking anyone. */
const randomSuffixBytes = 10;

/** A reference: now in Lagos to the minute, then the suffix (letters and digits) that makes it unique. */
export function purchaseReference(now: Date, suffix: string): string {
  if (!suffixPattern.test(suffix)) {
    throw new RangeError(`a reference suffix is 1-${suffixLengthMax} letters and digits: ${suffix}`);
  }
  return `${lagosMinute(now)}${suffix}`;
}

/** A new purchase's reference: dated now, with a random suffix. */
export const newPurchaseReference = (now: Date): string =>
  purchaseReference(now, randomBytes(randomSuffixBytes).toString('hex'));

/**
 * Ledger references of a purchase's three possible movements: the debit on acceptance, then either
 * the settlement of a success or the refund of a definite failure (settlement.ts).
 */
export const purchasePostings = {
  debit: (reference: string) => `vtu:${reference}:debit`,
  settle: (reference: string) => `vtu:${reference}:settle`,
  refund: (reference: string) => `vtu:${reference}:refund`,
};

/**
 * When the requery runner first looks at a purchase (next_requery_at): a minute after it was
 * accepted, sent or put to wait for a float top-up. That finds one whose answer never came (the
 * call's own timeout comes first), or one whose inline dispatch, job or top-up settlement was lost.
 * After each answer that leaves it processing, settlement.ts sets the next one on its backoff.
 */
export const firstRequeryAfterSeconds = 60;

/** The first requery of a purchase accepted, sent or put to wait at `now`. */
export const firstRequeryAt = (now: Date): Date => new Date(now.getTime() + firstRequeryAfterSeconds * 1000);

export type VtuTransactionView = {
  id: string;
  reference: string;
  status: 'processing' | 'success' | 'failed';
  service: string;
  provider: string;
  network?: string;
  recipient: string;
  /** Naira charged to the wallet (a debit) or credited to it once confirmed (a credit). */
  amount: number;
  direction: 'debit' | 'credit';
  /** Naira refunded of a success delivered in part (a social order the panel filled partly). */
  refunded?: number;
  token?: string;
  units?: string;
  pins?: string[];
  /** Whose meter, smartcard or betting account it is, as the provider named them. */
  customerName?: string;
  failureReason?: string;
  description: string;
  /** What was ordered, in the buy operation's own terms, so that it can be ordered again. */
  order?: PurchaseOrderView;
  createdAt: string;
  updatedAt: string;
};

/** The parts of a purchase's order a person picked (Buy again), beyond its recipient and network. */
export type PurchaseOrderView = {
  /** Disco, cable provider, betting company or exam. */
  provider?: string;
  /** Data plan, cable bouquet, exam variation or social service. */
  plan?: string;
  /** Meter type (prepaid, postpaid) or cable subscription type (change, renew). */
  type?: string;
  /** Naira: the face value asked for (airtime, electricity, betting, airtime sold), before any markup. */
  faceValue?: number;
  quantity?: number;
};

/** The order kept with the purchase (its provider request, amounts as kobo text), as a person picked it. */
function orderOf(request: unknown): PurchaseOrderView | undefined {
  const r = (typeof request === 'string' ? JSON.parse(request) : request) as Record<string, unknown> | null;
  if (r === null || typeof r !== 'object') return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const view: PurchaseOrderView = {};
  const provider =
    text(r.disco) ??
    text(r.company) ??
    text(r.exam) ??
    (r.service === 'cable' ? text(r.provider) : undefined);
  const plan = text(r.planId) ?? text(r.variation) ?? text(r.serviceId);
  const type = text(r.meterType) ?? text(r.subscriptionType);
  const face = text(r.amountKobo);
  if (provider !== undefined) view.provider = provider;
  if (plan !== undefined) view.plan = plan;
  if (type !== undefined) view.type = type;
  if (face !== undefined && /^\d+$/.test(face)) view.faceValue = koboToNaira(BigInt(face));
  if (typeof r.quantity === 'number') view.quantity = r.quantity;
  return Object.keys(view).length === 0 ? undefined : view;
}

/** The columns a purchase is shown with. */
type Viewed = Pick<
  VtuTransaction,
  | 'id'
  | 'reference'
  | 'status'
  | 'service'
  | 'provider'
  | 'network'
  | 'recipient'
  | 'amount'
  | 'direction'
  | 'refunded'
  | 'token'
  | 'units'
  | 'pins'
  | 'customer_name'
  | 'failure_reason'
  | 'description'
  | 'request'
  | 'created_at'
  | 'updated_at'
>;

export function toView(row: Viewed): VtuTransactionView {
  const pins =
    typeof row.pins === 'string' ? (JSON.parse(row.pins) as string[]) : (row.pins as string[] | null);
  const order = orderOf(row.request);
  return {
    id: row.id,
    reference: row.reference,
    status: row.status,
    service: row.service,
    provider: row.provider,
    ...(row.network === null ? {} : { network: row.network }),
    recipient: row.recipient,
    amount: koboToNaira(row.amount),
    direction: row.direction,
    ...(row.refunded > 0n ? { refunded: koboToNaira(row.refunded) } : {}),
    ...(row.token === null ? {} : { token: row.token }),
    ...(row.units === null ? {} : { units: row.units }),
    ...(pins === null ? {} : { pins }),
    ...(row.customer_name === null ? {} : { customerName: row.customer_name }),
    ...(row.failure_reason === null ? {} : { failureReason: row.failure_reason }),
    description: row.description,
    ...(order === undefined ? {} : { order }),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** One of the caller's purchases; another user's is NOT_FOUND, as if it did not exist. */
export async function findPurchase(
  deps: { db: Kysely<DB> },
  userId: string,
  id: string,
): Promise<VtuTransactionView> {
  const row = await deps.db
    .selectFrom('vtu_transactions')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) throw notFound('transaction');
  return toView(row);
}

/** The buyer's purchases among the ids, in the order asked; ids not theirs are left out. */
export async function findPurchases(
  deps: { db: Kysely<DB> },
  userId: string,
  ids: readonly string[],
): Promise<VtuTransactionView[]> {
  if (ids.length === 0) return [];
  const rows = await deps.db
    .selectFrom('vtu_transactions')
    .selectAll()
    .where('id', 'in', [...ids])
    .where('user_id', '=', userId)
    .execute();
  const byId = new Map(rows.map((row) => [row.id, toView(row)]));
  return ids.flatMap((id) => {
    const view = byId.get(id);
    return view === undefined ? [] : [view];
  });
}

export type PurchaseFilter = {
  status?: 'processing' | 'success' | 'failed';
  service?: string;
  /** When it was made (API.md section 5: a date is a whole Lagos day). */
  range?: DateRange;
};

/** The caller's purchases, newest first (ids are UUIDv7: they order ties), with the total. */
export async function listPurchases(
  deps: { db: Kysely<DB> },
  userId: string,
  filter: PurchaseFilter,
  page: { limit: number; offset: number },
): Promise<{ items: VtuTransactionView[]; limit: number; offset: number; total: number }> {
  let query = deps.db.selectFrom('vtu_transactions').where('user_id', '=', userId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.service !== undefined) query = query.where('service', '=', filter.service);
  if (filter.range?.from !== undefined) query = query.where('created_at', '>=', filter.range.from);
  if (filter.range?.before !== undefined) query = query.where('created_at', '<', filter.range.before);
  const { rows, total } = await newestFirstPage(query, page);
  return { items: rows.map(toView), limit: page.limit, offset: page.offset, total };
}
