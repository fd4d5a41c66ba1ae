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
  return (
    <Screen title="Fund your wallet">
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
