import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import type { CallError } from '../../../api/client.ts';
import { call } from '../../../api/client.ts';
import { requireSignIn } from '../../../auth-guard.ts';
import { Receipt, type ReceiptContent } from '../../../components/receipt.tsx';
import { KindIcon, kindLabels, type WalletEntry } from '../../../components/transaction-row.tsx';
import { ErrorNote, Screen, Waiting } from '../../../components/ui.tsx';
import { formatNairaNumber } from '../../../format.ts';

// One movement of the wallet (getTransaction): a top-up, a transfer, a savings lock, a reward...
// with its receipt. A purchase's own screen has more (its status, token, Buy again): linked from here.

/** The receipt of a wallet movement: what, who, how much. The balance after stays on screen only. */
function entryReceipt(entry: WalletEntry): ReceiptContent {
  const party = entry.direction === 'credit' ? 'From' : 'To';
  return {
    title: kindLabels[entry.kind],
    amount: entry.amount,
    direction: entry.direction,
    // A wallet movement is written once it has happened.
    status: 'Successful',
    lines: [
      { label: 'Details', value: entry.description },
      ...(entry.counterparty === undefined ? [] : [{ label: party, value: entry.counterparty }]),
    ],
    reference: entry.reference,
    createdAt: entry.createdAt,
  };
}

function Entry() {
  const { id } = Route.useParams();
  const query = useQuery({ queryKey: ['wallet-entry', id], queryFn: () => call('getTransaction', { id }) });
  const entry = query.data;
  return (
    <Screen title="Transaction details">
      <ErrorNote error={query.error as CallError | null} />
      {entry === undefined && query.isPending ? <Waiting label="Loading" /> : null}
      {entry ? (
        <>
          <div className="flex items-center gap-3">
            <KindIcon kind={entry.kind} />
            <p className="font-semibold" data-testid="entry-kind">
              {kindLabels[entry.kind]}
              {entry.counterparty
                ? ` ${entry.direction === 'credit' ? 'from' : 'to'} ${entry.counterparty}`
                : ''}
            </p>
          </div>
          <Receipt receipt={entryReceipt(entry)} reportable />
          <p>
            Your balance after it:{' '}
            <span className="whitespace-nowrap font-semibold">{formatNairaNumber(entry.balanceAfter)}</span>
          </p>
          {entry.purchaseId ? (
            <Link to="/transactions/$id" params={{ id: entry.purchaseId }} className="text-brand underline">
              Open the purchase
            </Link>
          ) : null}
          <Link to="/transactions" className="text-brand underline">
            Back to history
          </Link>
        </>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/transactions/entry/$id')({
  beforeLoad: requireSignIn,
  component: Entry,
});
