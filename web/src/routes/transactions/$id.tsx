import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { Repeat } from 'lucide-react';
import { serviceNames } from '../../../../src/shared/display-names.ts';
import { networkNames } from '../../../../src/shared/networks.ts';
import { type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { DeliveredCodes, groupInFours } from '../../components/delivered-codes.tsx';
import { Receipt, type ReceiptContent, type ReceiptLine } from '../../components/receipt.tsx';
import { statusWords } from '../../components/transaction-row.tsx';
import { ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { deliveryAwaited, purchasePollMs } from '../../payments/poll.ts';
import { buyAgainSearch, buyPaths } from '../../payments/prefill.ts';

// One purchase and its receipt, asked again about every 3 s while it is pending (API.md section 15),
// and while a token or pins that did not come with its success are awaited (API.md section 16).
// An electricity token is shown in groups of four, as it is typed into a meter, and can be copied, as
// can exam pins; all of it can be read again later from History. "Buy again" opens the buy screen
// filled in as this one was.

type Purchase = Output<'getMyVtuTransaction'>;

/** What the recipient of each service is called. */
const recipientLabels: Record<string, string> = {
  airtime: 'Phone number',
  data: 'Phone number',
  electricity: 'Meter number',
  cable: 'Smartcard number',
  betting: 'Customer ID',
  education: 'For',
  social: 'Link',
  airtime_to_cash: 'Sent from',
};

function receiptOf(t: Purchase): ReceiptContent {
  const lines: ReceiptLine[] = [
    { label: 'What', value: t.description },
    { label: recipientLabels[t.service] ?? 'Recipient', value: t.recipient },
  ];
  // Whose meter, smartcard or betting account it is, as the provider named them.
  if (t.customerName !== undefined) lines.push({ label: 'Customer', value: t.customerName });
  if (t.network !== undefined) {
    lines.push({
      label: 'Network',
      value: networkNames[t.network as keyof typeof networkNames] ?? t.network,
    });
  }
  if (t.token !== undefined) lines.push({ label: 'Token', value: groupInFours(t.token) });
  if (t.units !== undefined) lines.push({ label: 'Units', value: t.units });
  if (t.refunded !== undefined) lines.push({ label: 'Refunded', value: formatNairaNumber(t.refunded) });
  return {
    title: serviceNames[t.service] ?? t.service,
    amount: t.amount,
    direction: t.direction,
    status: statusWords[t.status],
    lines,
    reference: t.reference,
    createdAt: t.createdAt,
  };
}

function StatusNote({ t }: { t: Purchase }) {
  const colours = {
    success: 'bg-green-100 text-green-900',
    failed: 'bg-red-100 text-red-900',
    processing: 'bg-amber-100 text-amber-900',
  }[t.status];
  return (
    <p
      role="status"
      aria-live="polite"
      data-testid="status"
      className={`rounded-xl p-4 text-xl font-bold ${colours}`}
    >
      {statusWords[t.status]}
      {t.status === 'processing'
        ? ': waiting for the provider. Most finish within a few minutes; we will notify you when it is done.'
        : ''}
      {t.status === 'failed' && t.direction === 'debit'
        ? `: ${formatNairaNumber(t.amount)} is back in your wallet`
        : ''}
      {deliveryAwaited(t)
        ? `. Your ${t.service === 'education' ? 'PINs are' : 'token is'} on the way: it shows here, in your inbox and by email as soon as the provider releases it.`
        : ''}
    </p>
  );
}

function Transaction() {
  const { id } = Route.useParams();
  const query = useQuery({
    queryKey: ['transaction', id],
    queryFn: () => call('getMyVtuTransaction', { id }),
    refetchInterval: (q) => purchasePollMs(q.state.data),
  });
  const t = query.data;
  const buyAgain = t === undefined ? undefined : buyPaths[t.service as keyof typeof buyPaths];
  return (
    <Screen title="Transaction">
      <ErrorNote error={query.error as CallError | null} />
      {t === undefined && query.isPending ? <Waiting label="Loading" /> : null}
      {t ? (
        <>
          <StatusNote t={t} />
          <DeliveredCodes
            id="purchase"
            {...(t.token === undefined ? {} : { token: t.token })}
            {...(t.units === undefined ? {} : { units: t.units })}
            {...(t.pins === undefined ? {} : { pins: t.pins })}
          />
          <Receipt receipt={receiptOf(t)} reportable />
          {buyAgain && t.status !== 'processing' ? (
            <Link
              to={buyAgain}
              search={buyAgainSearch(t)}
              className="flex items-center justify-center gap-2 rounded-lg bg-brand px-4 py-3 text-lg font-semibold text-white"
            >
              <Repeat size={18} aria-hidden="true" />
              {t.direction === 'credit' ? 'Sell again' : 'Buy again'}
            </Link>
          ) : null}
          <div className="flex justify-between">
            <Link to="/transactions" className="text-brand underline">
              History
            </Link>
            <Link to="/" className="text-brand underline">
              Back home
            </Link>
          </div>
        </>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/transactions/$id')({
  beforeLoad: requireSignIn,
  component: Transaction,
});
