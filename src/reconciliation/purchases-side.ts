import type { RequeryOutcome, VtuProvider, VtuService } from '../providers/vtu/vtu-provider.ts';
import type { SentPurchase } from '../vtu/module.ts';
import { type ComparedItem, type StoredRecord, storedRecord } from './records.ts';
import type { Bucket } from './schemas.ts';

// A VTU provider's reconciliation (API.md 17.5): every purchase routed to it in the period requeried,
// and, where the provider keeps an order list we can read (the data vendor), its orders of the
// period compared too, so that an order it took that we have no record of (a restore to an earlier
// backup) is found. VTpass and the SMM panel keep no list: there only what we know can be compared,
// and the run says so (providerList false).

export type PurchasesSideDeps = {
  provider: Pick<VtuProvider, 'requery' | 'listOrders'>;
  purchasesSentBetween(from: Date, to: Date): Promise<SentPurchase[]>;
  purchasesByReference(references: readonly string[]): Promise<Map<string, SentPurchase>>;
};

/** Requeries in flight at once: a day's purchases in minutes, without crowding the provider. */
const requeriesAtOnce = 8;

type Theirs = {
  outcome: RequeryOutcome | null;
  chargedKobo: bigint | null;
  listedAt: Date | null;
  recipient?: string | null;
};

/** Where one purchase stands on both sides; `theirs.outcome` null: never sent, so never theirs. */
export function purchaseBucket(ours: SentPurchase, theirs: Theirs): Bucket {
  const outcome = theirs.outcome;
  if (outcome === null) return ours.status === 'success' ? 'missingThere' : 'matched';
  switch (outcome.status) {
    case 'not_found':
      // Never reached them: right only if we refunded it.
      return ours.status === 'failed' ? 'matched' : 'missingThere';
    case 'success': {
      if (ours.status !== 'success') return 'statusMismatch';
      const charged = theirs.chargedKobo ?? outcome.chargedKobo ?? null;
      const comparable = charged !== null && ours.service !== 'social' && ours.service !== 'airtime_to_cash';
      return comparable && charged !== ours.wholesaleKobo ? 'amountMismatch' : 'matched';
    }
    case 'failed':
      return ours.status === 'failed' ? 'matched' : 'statusMismatch';
    case 'pending':
    case 'unknown':
      // Both still in flight agree; a settled purchase the provider has not settled does not.
      return ours.status === 'processing' ? 'matched' : 'statusMismatch';
  }
}

const ourRecord = (purchase: SentPurchase): StoredRecord =>
  storedRecord({
    status: purchase.sentAt === null && purchase.status === 'processing' ? 'not_sent' : purchase.status,
    amountKobo: purchase.amountKobo,
    at: purchase.at,
    userId: purchase.userId,
    kind: purchase.service,
    providerReference: purchase.providerReference,
    recipient: purchase.recipient,
    note: purchase.refundedKobo > 0n ? `${purchase.refundedKobo} kobo refunded of a part delivery` : null,
  });

function theirRecord(theirs: Theirs, service: VtuService): StoredRecord | null {
  const { outcome } = theirs;
  if (outcome === null || outcome.status === 'not_found') return null;
  const charged = theirs.chargedKobo ?? (outcome.status === 'success' ? (outcome.chargedKobo ?? null) : null);
  return storedRecord({
    status: outcome.status,
    amountKobo: charged,
    at: theirs.listedAt,
    kind: service,
    providerReference: 'providerReference' in outcome ? outcome.providerReference : null,
    recipient: theirs.recipient,
    note: outcome.status === 'failed' || outcome.status === 'unknown' ? outcome.reason : null,
  });
}

/** Runs `work` over the items, `requeriesAtOnce` at a time, keeping their order. */
async function eachAtOnce<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(requeriesAtOnce, items.length) }, worker));
  return results;
}

export async function comparePurchases(
  deps: PurchasesSideDeps,
  from: Date,
  to: Date,
): Promise<{ items: ComparedItem[]; providerList: boolean }> {
  const { provider } = deps;
  const listed = provider.listOrders === undefined ? null : await provider.listOrders({ from, to });
  const listedByReference = new Map(
    (listed ?? []).filter((order) => order.reference !== null).map((order) => [order.reference!, order]),
  );
  const ours = new Map((await deps.purchasesSentBetween(from, to)).map((p) => [p.reference, p]));
  const elsewhere = await deps.purchasesByReference(
    [...listedByReference.keys()].filter((reference) => !ours.has(reference)),
  );
  for (const [reference, purchase] of elsewhere) ours.set(reference, purchase);

  const compared = await eachAtOnce([...ours.values()], async (purchase): Promise<ComparedItem> => {
    const order = listedByReference.get(purchase.reference);
    let theirs: Theirs;
    if (order !== undefined) {
      theirs = {
        outcome: order.outcome,
        chargedKobo: order.chargedKobo,
        listedAt: order.createdAt,
        recipient: order.recipient,
      };
    } else if (purchase.sentAt === null) {
      theirs = { outcome: null, chargedKobo: null, listedAt: null };
    } else {
      const outcome = await provider.requery({
        reference: purchase.reference,
        service: purchase.service,
        providerReference: purchase.providerReference,
        sentAt: purchase.sentAt,
      });
      theirs = { outcome, chargedKobo: null, listedAt: null };
    }
    return {
      reference: purchase.reference,
      bucket: purchaseBucket(purchase, theirs),
      ours: ourRecord(purchase),
      theirs: theirRecord(theirs, purchase.service),
    };
  });
  // Orders the provider took that we have no record of at all.
  for (const order of listed ?? []) {
    const reference = order.reference ?? `provider:${order.providerReference}`;
    if (ours.has(reference)) continue;
    compared.push({
      reference,
      bucket: 'missingHere',
      ours: null,
      theirs: theirRecord(
        {
          outcome: order.outcome,
          chargedKobo: order.chargedKobo,
          listedAt: order.createdAt,
          recipient: order.recipient,
        },
        order.service,
      ),
    });
  }
  compared.sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
  return { items: compared, providerList: listed !== null };
}
