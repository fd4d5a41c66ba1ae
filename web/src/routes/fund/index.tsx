import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { useLimits, useMe, useWallet } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { TierUnlocks } from '../../components/kyc-tiers.tsx';
import { QuickAmounts } from '../../components/quick-amounts.tsx';
import { Button, ErrorNote, Field, Screen } from '../../components/ui.tsx';
import { formatNairaNumber, parseNaira } from '../../format.ts';
import { describeFundingHeld } from '../../payments/limits.ts';
import { DedicatedAccount } from './-dedicated-account.tsx';

// Fund the wallet: by bank transfer to the person's own account number (Tier 2), or an amount paid
// at the payment provider's checkout. Coming back from the checkout proves nothing: the return page
// asks the service, which credits only on the provider's word. An amount that would pass the tier's
// maximum balance is said before paying: the part over it is held (API.md 17.2).

const quickAmounts = [1_000, 2_000, 5_000, 10_000] as const;

/** Below Tier 2: what the account number needs, and the way to it. */
function AccountNumberLocked() {
  return (
    <section
      aria-labelledby="account-locked-title"
      className="flex flex-col gap-2 rounded-xl bg-brand-light p-4"
    >
      <h2 id="account-locked-title" className="text-lg font-semibold">
        Get your own account number
      </h2>
      <p className="text-sm">
        Money sent to it from any bank lands in your wallet. It comes with Tier 2 (your NIN), which lets you:
      </p>
      <TierUnlocks tier={2} />
      <Link to="/verify" className="self-start rounded-lg bg-brand px-4 py-2 font-semibold text-white">
        Verify now
      </Link>
    </section>
  );
}

function Fund() {
  const [amountText, setAmountText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const amount = parseNaira(amountText);
  const me = useMe();
  const tier = me.data?.kycTier;
  const limits = useLimits();
  const wallet = useWallet();
  const held =
    amount === null || limits.data === undefined || wallet.data === undefined
      ? null
      : describeFundingHeld(limits.data, wallet.data.balance, amount);
  return (
    <Screen title="Fund your wallet">
      {tier === undefined ? null : tier >= 2 ? <DedicatedAccount /> : <AccountNumberLocked />}
      <form
        aria-labelledby="card-title"
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
        <h2 id="card-title" className="text-lg font-semibold">
          By card or bank app
        </h2>
        <QuickAmounts
          amounts={quickAmounts}
          chosen={amount}
          onChoose={(chosen) => setAmountText(String(chosen))}
          label="Amounts to fund"
        />
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint="From ₦100 to ₦1,000,000"
          error={amountText !== '' && amount === null ? 'Type an amount such as 5000' : undefined}
        />
        {held !== null ? (
          <p role="status" className="rounded-lg bg-amber-100 p-3 text-amber-900" data-testid="funding-held">
            {held}
          </p>
        ) : null}
        <ErrorNote error={error} />
        <Button type="submit" busy={busy} disabled={amount === null}>
          {amount === null ? 'Continue to payment' : `Pay ${formatNairaNumber(amount)}`}
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/fund/')({ beforeLoad: requireSignIn, component: Fund });
