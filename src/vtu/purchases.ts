import { sql, type Transaction } from 'kysely';
import { type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { type WithCommit, writeWithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import type { DateRange } from '../lagos-time.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { decidePostings, InsufficientBalanceError, writePostings } from '../ledger/postings.ts';
import { koboToNaira } from '../money.ts';
import type { PurchaseRequest, VtuService } from '../providers/vtu/vtu-provider.ts';
import { admissionOf } from './debit-rules.ts';
import { type DispatchDeps, JOB_VTU_DISPATCH } from './dispatch.ts';
import { firstRequeryAt, purchasePostings, type VtuTransaction } from './settlement.ts';

// Accepting a purchase (SPEC.md "What the service does" 2, API.md section 5): after the caller's
// checks (schema, auth, Tier 1, PIN, recipient, price), one database transaction debits the wallet
// into vtu_in_flight, records the purchase as processing and enqueues its dispatch. The purchase is
// then sent by this process right after commit, so nobody waits on a queue's poll (at most
// config.vtu.sendsMax at once, src/vtu/sends.ts); the job is the safety net that sends it after a crash.

/** A purchase ready to accept: routed, priced and checked. */
export type PurchaseOrder = {
  service: VtuService;
  provider: string;
  network: string | null;
  /** What the user sees as the recipient (phone, meter, IUC, customer id, link). */
  recipient: string;
  /** The provider request without its reference, which is made here. */
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

export type AcceptRequest = {
  userId: string;
  order: PurchaseOrder;
  /** Made once per purchase, whatever the number of runs of the batches holding it. */
  id: string;
  reference: string;
  /** What commits with the acceptance (the request's Idempotency-Key answer: the purchase). */
  withCommit?: WithCommit | undefined;
};

/**
 * Accepts many purchases in one transaction (the group commit, src/db/batching.ts): the debits are
 * decided one by one in arrival order, as if each had its own transaction, so a wallet that covers
 * two of three purchases accepts the first two; then the accepted purchases are recorded by one
 * INSERT, their dispatch enqueued as one durable job, and their debits written by one statement.
 */
export async function acceptPurchases(
  deps: DispatchDeps,
  requests: AcceptRequest[],
): Promise<BatchResults<VtuTransactionView>> {
  const now = deps.clock.now();
  const rows = requests.map((request) => purchaseRow(request, now));
  // Credits (airtime-to-cash) debit nothing: only the debits are decided against the wallets.
  const debitRows = rows.filter((row) => row.direction === 'debit');
  return deps.db.transaction().execute(async (trx) => {
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
        // The purchase rules that need state at debit time (debit-rules.ts), decided with the debits.
        admission: admissionOf(
          deps.debitRules ?? [],
          trx,
          debitRows.map((row) => ({ userId: row.user_id, service: row.service, amountKobo: row.amount })),
          now,
        ),
      },
    );
    const debitIndex = new Map(debitRows.map((row, j) => [row.id, j]));
    const isAccepted = rows.map((row) => {
      const j = debitIndex.get(row.id);
      return j === undefined || decided.accepted[j] === true;
    });
    const accepted = rows.filter((_, i) => isAccepted[i]);
    const views = rows.map((row) => toView(acceptedRow(row)));
    if (accepted.length > 0) {
      await recordPurchases(trx, accepted, now);
      // The safety net after a crash: one job sends whatever of the batch was not sent by then.
      await deps.jobs.insert(JOB_VTU_DISPATCH, [{ data: { ids: accepted.map((row) => row.id) } }], {
        db: trx,
      });
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
      const naira = koboToNaira(row.amount);
      return rejected(
        new AppError('INSUFFICIENT_FUNDS', `your wallet does not cover ₦${naira}`, {
          details: { required: naira },
        }),
      );
    });
  });
}

/**
 * Answers a batch of acceptances whose transaction threw. It may have committed all the same (a
 * COMMIT whose answer was lost), and a transaction is all or nothing: each purchase recorded was
 * accepted by it, and gets its view. Each purchase not recorded was not accepted (the batch rolled
 * back, or refused it) and runs again alone, as if it had just arrived. Should a COMMIT still be in
 * progress while this looks, the run alone meets the purchase's own id and fails: the caller gets a
 * 5xx, and its Idempotency-Key, completed by that commit, replays the one answer.
 */
export async function recoverAcceptances(
  deps: DispatchDeps,
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
      deps.logger?.warn({ id: row.id }, 'purchase batch threw after its commit; the purchase stands');
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
    amount: order.direction === 'credit' ? order.creditKobo! : order.wholesaleKobo + order.markupKobo,
    wholesale: order.wholesaleKobo,
    markup: order.markupKobo,
    status: 'processing' as const,
    customer_name: order.customerName ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** The row as recorded: nothing delivered, nothing failed yet. */
const acceptedRow = (row: PurchaseRow): Viewed => ({
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
  deps: Pick<DispatchDeps, 'db'>,
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

export type PurchaseFilter = {
  status?: 'processing' | 'success' | 'failed';
  service?: string;
  /** When it was made (API.md section 5: a date is a whole Lagos day). */
  range?: DateRange;
};

/** The caller's purchases, newest first (ids are UUIDv7: they order ties), with the total. */
export async function listPurchases(
  deps: Pick<DispatchDeps, 'db'>,
  userId: string,
  filter: PurchaseFilter,
  page: { limit: number; offset: number },
): Promise<{ items: VtuTransactionView[]; limit: number; offset: number; total: number }> {
  let query = deps.db.selectFrom('vtu_transactions').where('user_id', '=', userId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.service !== undefined) query = query.where('service', '=', filter.service);
  if (filter.range?.from !== undefined) query = query.where('created_at', '>=', filter.range.from);
  if (filter.range?.before !== undefined) query = query.where('created_at', '<', filter.range.before);
  const rows = await query
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const counted = await query.select(sql<string>`count(*)::text`.as('n')).executeTakeFirstOrThrow();
  return { items: rows.map(toView), limit: page.limit, offset: page.offset, total: Number(counted.n) };
}
