import assert from 'node:assert/strict';
import { type RawBuilder, sql } from 'kysely';
import type { EntryColumns } from '../ledger/history.ts';
import { type MovementKind, movementKinds } from './schemas.ts';

// What kind of movement each wallet-history entry is (API.md section 6), decided from the posting's
// reference. The wallet knows no domain: each module that moves a wallet's money gives, beside its
// operations and jobs, the rules that tell its movements (its `movementKinds`), made from the very
// builders its postings use, and createModules hands them all to the wallet. An operator's approved
// correction is an `adjustment` (the adjustments module's rule), and so is a reference no rule knows.

/** One kind of movement a module makes, told by its posting's reference. */
export type MovementKindRule = {
  kind: MovementKind;
  /** The builder of the posting's reference, from its one variable part (an id, a reference). */
  reference: (part: string) => string;
  /** Only entries moving this way on the wallet (a transfer is out for one wallet, in for the other). */
  direction?: 'credit' | 'debit';
  /** Only entries whose posting also moves this account (the ledger's own record of where money came from). */
  alongside?: string;
};

/** The entry's kind as SQL: selected for each entry, and compared with when listing one kind. */
export type KindOf = (entry: EntryColumns) => RawBuilder<MovementKind>;

/** Any variable part: the builder's reference becomes a LIKE pattern. */
const anything = '%';

/**
 * The classifier of the rules, tried in their order (first match wins), as one CASE over the entry's
 * columns: the history stays one query, whatever the number of kinds.
 */
export function movementKindOf(rules: readonly MovementKindRule[]): KindOf {
  const patterns = rules.map((rule) => rule.reference(anything));
  // LIKE's other wildcard would match more than the builder's text: no builder writes it.
  for (const pattern of patterns) assert(!pattern.includes('_'), `a reference pattern holds '_': ${pattern}`);
  // Every kind of the contract but `adjustment` is some module's: one left untold would never show.
  for (const kind of movementKinds)
    assert(kind === 'adjustment' || rules.some((rule) => rule.kind === kind), `no module tells ${kind}`);
  return (entry) => {
    const cases = rules.map(
      (rule, i) => sql`when ${condition(rule, patterns[i]!, entry)} then ${sql.lit(rule.kind)}`,
    );
    return sql<MovementKind>`(case ${sql.join(cases, sql` `)} else ${sql.lit('adjustment')} end)`;
  };
}

function condition(rule: MovementKindRule, pattern: string, entry: EntryColumns): RawBuilder<boolean> {
  const parts = [sql<boolean>`${entry.reference} like ${sql.lit(pattern)}`];
  if (rule.direction === 'credit') parts.push(sql`${entry.amount} > 0`);
  if (rule.direction === 'debit') parts.push(sql`${entry.amount} < 0`);
  if (rule.alongside !== undefined) parts.push(entry.postingMoves(rule.alongside));
  return sql<boolean>`(${sql.join(parts, sql` and `)})`;
}

/**
 * The kinds whose entry belongs to a purchase (or a sale): its posting's metadata names it
 * (`purchaseId`, API.md section 6). A dispute refund names the purchase when the dispute was about one.
 */
export const purchaseKinds: ReadonlySet<MovementKind> = new Set([
  'purchase',
  'refund',
  'airtime_cash',
  'dispute_refund',
]);
