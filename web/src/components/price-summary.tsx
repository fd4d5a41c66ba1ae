import type { ReactNode } from 'react';
import { formatNairaNumber } from '../format.ts';

// The summary every payment shows before its PIN: what is being bought and for whom, then the fee
// and what the wallet will be charged. A price still being fetched reads "…" rather than a guess.

export type SummaryRow = { label: string; value: ReactNode };

export function PriceSummary(props: {
  rows: SummaryRow[];
  /** The fee (markup), in naira, when the screen shows one. */
  fee?: number | undefined;
  /** What the wallet is charged, in naira; undefined while the price loads. */
  total: number | undefined;
  totalLabel?: string;
}) {
  const money = (n: number | undefined) => (n === undefined ? '…' : formatNairaNumber(n));
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 rounded-xl bg-brand-light p-4">
      {props.rows.map((row) => (
        <div key={row.label} className="contents">
          <dt>{row.label}</dt>
          <dd className="text-right font-semibold break-words">{row.value}</dd>
        </div>
      ))}
      {'fee' in props ? (
        <>
          <dt>Fee</dt>
          <dd className="text-right font-semibold whitespace-nowrap">{money(props.fee)}</dd>
        </>
      ) : null}
      <dt className="self-center">{props.totalLabel ?? 'You pay'}</dt>
      <dd className="text-right text-xl font-bold whitespace-nowrap" data-testid="price">
        {money(props.total)}
      </dd>
    </dl>
  );
}
