import { useMutation } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Screen } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';

// Admin: reconcile now and check the ledger (API.md section 11). Reconciling re-verifies pending
// top-ups and float top-ups with the payment provider and requeries purchases still processing, as the
// five-minute job does; the ledger check verifies every balance against its entries and that all
// entries sum to zero. Both answers are shown in plain words, counts first.

type Reconciled = Output<'adminReconcile'>;
type LedgerCheck = Output<'adminLedgerCheck'>;

const koboText = (kobo: string | undefined) =>
  kobo === undefined ? '?' : formatNairaNumber(Number(kobo) / 100);

/** One imbalance the ledger check found, in words. */
function imbalanceWords(i: Record<string, string>): string {
  switch (i.kind) {
    case 'account':
      return `Account ${i.account}: its balance is ${koboText(i.balance)} but its entries add up to ${koboText(i.entriesSum)}.`;
    case 'negative_user_account':
      return `Account ${i.account} is below zero: ${koboText(i.balance)}.`;
    case 'posting':
      return `Posting ${i.reference} does not add up to zero: it is off by ${koboText(i.sum)}.`;
    case 'empty_posting':
      return `Posting ${i.reference} has no entries.`;
    case 'total':
      return `All entries together are off by ${koboText(i.sum)}.`;
    default:
      return Object.entries(i)
        .map(([key, value]) => `${key}: ${value}`)
        .join(', ');
  }
}

/** Each part of a reconciliation and what its counts mean. */
const parts: Array<{
  key: keyof Reconciled;
  title: string;
  counts: Array<[string, string]>;
}> = [
  {
    key: 'topups',
    title: 'Top-ups',
    counts: [
      ['checked', 'checked'],
      ['credited', 'credited now'],
      ['failed', 'failed'],
      ['expired', 'expired'],
      ['settledMeanwhile', 'already settled meanwhile'],
      ['stillPending', 'still pending'],
      ['errors', 'could not be checked'],
    ],
  },
  {
    // `transfers` is the contract's name for the float top-ups' counts (decision 0038).
    key: 'transfers',
    title: 'Float top-ups of providers',
    counts: [
      ['checked', 'checked'],
      ['resolved', 'settled'],
      ['notFound', 'unknown to the provider'],
      ['stillPending', 'still pending'],
      ['errors', 'could not be checked'],
    ],
  },
  {
    key: 'dedicatedAccounts',
    title: 'Bank deposits into customer accounts',
    counts: [
      ['scanned', 'looked at'],
      ['credited', 'credited now'],
      ['alreadyCredited', 'already credited'],
      ['ignored', 'ignored'],
      ['errors', 'could not be checked'],
    ],
  },
  {
    key: 'purchases',
    title: 'Purchases still processing',
    counts: [
      ['checked', 'checked'],
      ['succeeded', 'succeeded'],
      ['failed', 'failed and refunded'],
      ['stillProcessing', 'still processing'],
      ['dispatched', 'sent to the provider'],
      ['alerted', 'stuck (an alert was raised)'],
    ],
  },
];

function problemsIn(result: Reconciled): number {
  return (
    result.topups.errors +
    result.transfers.errors +
    result.dedicatedAccounts.errors +
    result.purchases.alerted
  );
}

function ReconcileResult({ result }: { result: Reconciled }) {
  const problems = problemsIn(result);
  return (
    <div className="flex flex-col gap-3" data-testid="reconcile-result">
      <p
        className={`rounded-xl p-3 font-semibold ${problems === 0 ? 'bg-green-100 text-green-900' : 'bg-red-100 text-red-900'}`}
      >
        {problems === 0
          ? 'Reconciliation finished: everything checked without a problem.'
          : `Reconciliation finished with ${problems} ${problems === 1 ? 'problem' : 'problems'}: see the counts below and the alerts.`}
      </p>
      {parts.map((part) => {
        const counts = result[part.key] as Record<string, number>;
        const shown = part.counts.filter(([field]) => (counts[field] ?? 0) !== 0);
        return (
          <div key={part.key}>
            <h3 className="font-semibold">{part.title}</h3>
            {shown.length === 0 ? (
              <p className="text-sm">Nothing was waiting.</p>
            ) : (
              <dl className="grid grid-cols-[1fr_auto] gap-x-3 text-sm">
                {shown.map(([field, words]) => (
                  <div key={field} className="contents">
                    <dt>{words[0]!.toUpperCase() + words.slice(1)}</dt>
                    <dd className="text-right tabular-nums">{counts[field]}</dd>
                  </div>
                ))}
              </dl>
            )}
          </div>
        );
      })}
    </div>
  );
}

function CheckResult({ result }: { result: LedgerCheck }) {
  return (
    <div className="flex flex-col gap-2" data-testid="ledger-result">
      <p
        className={`rounded-xl p-3 font-semibold ${result.ok ? 'bg-green-100 text-green-900' : 'bg-red-100 text-red-900'}`}
      >
        {result.ok
          ? `The ledger balances: ${result.accounts} accounts and ${result.entries} entries checked, no differences.`
          : `The ledger does not balance: ${result.imbalances.length} ${result.imbalances.length === 1 ? 'difference' : 'differences'} in ${result.accounts} accounts and ${result.entries} entries.`}
      </p>
      {result.imbalances.length > 0 ? (
        <ul className="list-disc pl-5 text-sm" aria-label="Differences">
          {result.imbalances.map((i) => (
            <li key={JSON.stringify(i)}>{imbalanceWords(i)}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Ledger() {
  const reconcile = useMutation({ mutationFn: () => call('adminReconcile', {}) });
  const check = useMutation({ mutationFn: () => call('adminLedgerCheck', {}) });

  return (
    <Screen title="Reconcile and ledger check">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <section aria-labelledby="reconcile-title" className="flex flex-col gap-3">
        <h2 id="reconcile-title" className="text-lg font-semibold">
          Reconcile now
        </h2>
        <p>
          Asks the payment provider about every pending top-up and float top-up, credits bank deposits whose
          notice was lost, and asks the providers about every purchase still processing. The same runs by
          itself every five minutes.
        </p>
        <Button busy={reconcile.isPending} onClick={() => reconcile.mutate()}>
          Reconcile now
        </Button>
        <ErrorNote error={reconcile.error as CallError | null} />
        <div role="status" aria-live="polite">
          {reconcile.data ? <ReconcileResult result={reconcile.data} /> : null}
        </div>
      </section>
      <section aria-labelledby="check-title" className="flex flex-col gap-3">
        <h2 id="check-title" className="text-lg font-semibold">
          Check the ledger
        </h2>
        <p>
          Checks that every account's balance equals the sum of its entries, and that all entries together add
          up to zero. It changes nothing.
        </p>
        <Button busy={check.isPending} onClick={() => check.mutate()}>
          Check the ledger
        </Button>
        <ErrorNote error={check.error as CallError | null} />
        <div role="status" aria-live="polite">
          {check.data ? <CheckResult result={check.data} /> : null}
        </div>
      </section>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/ledger')({ beforeLoad: requireSignIn, component: Ledger });
