import { type RawBuilder, sql } from 'kysely';
import { disputePostings } from '../disputes/postings.ts';
import { checkinPostings } from '../growth/checkin.ts';
import { systemAccounts } from '../ledger/accounts.ts';
import type { EntryColumns } from '../ledger/history.ts';
import { savingsPostings } from '../savings/service.ts';
import { walletTransferPostingReference } from '../transfers/service.ts';
import { purchasePostings } from '../vtu/purchases.ts';
import { dedicatedPostingReference } from './dedicated-accounts.ts';
import type { MovementKind } from './schemas.ts';
import { topupPostingReference } from './service.ts';

// What kind of movement each wallet-history entry is (API.md section 6), decided in one place from
// the posting's reference, which every domain makes with the builders imported here: a new kind of
// posting is classified by adding its builder to the rules below. A reference no rule knows (an
// operator's correction, say) is an `adjustment`.

type Rule = {
  kind: MovementKind;
  /** The builder's reference with `%` for its variable parts: a LIKE pattern. */
  pattern: string;
  /** Only entries moving this way on the wallet (a transfer is out for one wallet, in for the other). */
  direction?: 'credit' | 'debit';
  /** Only entries whose posting also moves this account (the ledger's own record of where money came from). */
  alongside?: string;
};

const anything = '%';

// First match wins. The builders' own text never holds LIKE's other wildcard, `_`. Built when this
// module loads: no builder's module imports this one, however indirectly (history.ts is its one
// importer, apart from the top-ups), so every builder is ready by then.
const rules: readonly Rule[] = [
  { kind: 'topup', pattern: topupPostingReference(anything) },
  { kind: 'bank_transfer', pattern: dedicatedPostingReference(anything) },
  { kind: 'transfer_in', pattern: walletTransferPostingReference(anything), direction: 'credit' },
  { kind: 'transfer_out', pattern: walletTransferPostingReference(anything), direction: 'debit' },
  { kind: 'purchase', pattern: purchasePostings.debit(anything) },
  { kind: 'refund', pattern: purchasePostings.refund(anything) },
  // A settlement reaches the wallet for a sale's payout, or for the part of a purchase not delivered;
  // a sale's payout alone comes from airtime_cash_payouts (vtu/settlement.ts).
  {
    kind: 'airtime_cash',
    pattern: purchasePostings.settle(anything),
    alongside: systemAccounts.airtimeCashPayouts,
  },
  { kind: 'refund', pattern: purchasePostings.settle(anything) },
  { kind: 'savings_lock', pattern: savingsPostings.lock(anything) },
  { kind: 'savings_release', pattern: savingsPostings.break(anything) },
  { kind: 'savings_release', pattern: savingsPostings.mature(anything) },
  { kind: 'reward', pattern: checkinPostings.withdrawal(anything) },
  { kind: 'dispute_refund', pattern: disputePostings.refund(anything) },
];

function condition(rule: Rule, entry: EntryColumns): RawBuilder<boolean> {
  const parts = [sql<boolean>`${entry.reference} like ${sql.lit(rule.pattern)}`];
  if (rule.direction === 'credit') parts.push(sql`${entry.amount} > 0`);
  if (rule.direction === 'debit') parts.push(sql`${entry.amount} < 0`);
  if (rule.alongside !== undefined) parts.push(entry.postingMoves(rule.alongside));
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

/** The entry's kind, as SQL: selected for each entry, and compared with when listing one kind. */
export function movementKindOf(entry: EntryColumns): RawBuilder<MovementKind> {
  const cases = rules.map((rule) => sql`when ${condition(rule, entry)} then ${sql.lit(rule.kind)}`);
  return sql<MovementKind>`(case ${sql.join(cases, sql` `)} else ${sql.lit('adjustment')} end)`;
}

/**
 * The kinds whose entry belongs to a purchase (or a sale): its posting's metadata names it. A
 * dispute refund names the purchase when the dispute was about one.
 */
export const purchaseKinds: ReadonlySet<MovementKind> = new Set([
  'purchase',
  'refund',
  'airtime_cash',
  'dispute_refund',
]);
