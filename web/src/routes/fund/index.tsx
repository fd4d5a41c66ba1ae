import { useMutation, useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Field, Screen } from '../../components/ui.tsx';
import { formatNaira, parseNaira } from '../../format.ts';

// Fund the wallet: an amount, then the payment provider's checkout. Coming back from it proves
// nothing: the return page asks the service, which credits only on the provider's word.

function Fund() {
  const [amountText, setAmountText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const amount = parseNaira(amountText);
  const me = useQuery({ queryKey: ['me'], queryFn: () => call('getMe', {}) });
  // The same account every time (SPEC.md item 12): asking again answers the one already opened.
  const account = useMutation({ mutationFn: () => call('requestDedicatedAccount', {}) });
  return (
    <Screen title="Fund your wallet">
      {me.data && me.data.kycTier >= 2 ? (
        <section
          aria-labelledby="transfer-title"
          className="flex flex-col gap-2 rounded-xl bg-brand-light p-4"
        >
          <h2 id="transfer-title" className="text-lg font-semibold">
            By bank transfer
          </h2>
          {account.data ? (
            <dl className="grid grid-cols-2 gap-1" data-testid="dedicated-account">
              <dt>Bank</dt>
              <dd className="font-semibold">{account.data.bankName}</dd>
              <dt>Account number</dt>
              <dd className="font-semibold">{account.data.accountNumber}</dd>
              <dt>Account name</dt>
              <dd className="font-semibold">{account.data.accountName}</dd>
            </dl>
          ) : (
            <Button variant="secondary" busy={account.isPending} onClick={() => account.mutate()}>
              Show my account number
            </Button>
          )}
          <p className="text-sm">Money sent to it is added to your wallet when the bank confirms it.</p>
          <ErrorNote error={account.error as CallError | null} />
        </section>
      ) : null}
      <form
        className="flex flex-col gap-4"
        onSubmit={async (event) => {
          event.preventDefault();
          if (amount === null) return;
          setBusy(true);
          setError(null);
          try {
            const intent = await call('createTopupIntent', { amount });
            window.location.assign(intent.checkoutUrl);
          } catch (caught) {
            setError(caught as CallError);
            setBusy(false);
          }
        }}
      >
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint="From ₦100 to ₦1,000,000"
          error={amountText !== '' && amount === null ? 'Type an amount such as 5000' : undefined}
        />
        <ErrorNote error={error} />
        <Button type="submit" busy={busy} disabled={amount === null}>
          {amount === null ? 'Continue to payment' : `Pay ${formatNaira(amount)}`}
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/fund/')({ beforeLoad: requireSignIn, component: Fund });
