import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { networkOfPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { Button, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira, parseNaira } from '../../format.ts';

// Buy airtime: the number (its network found as it is typed), the amount, then a summary with the
// price and fee, and the PIN asked last. The Idempotency-Key is made when the summary opens, so a
// retry after a lost connection is the same purchase, never a second one.

const networks = ['mtn', 'glo', 'airtel', '9mobile'] as const;
type Network = (typeof networks)[number];
const networkNames: Record<Network, string> = {
  mtn: 'MTN',
  glo: 'Glo',
  airtel: 'Airtel',
  '9mobile': '9mobile',
};

function BuyAirtime() {
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [amountText, setAmountText] = useState('');
  const [chosen, setChosen] = useState<Network | null>(null);
  const [pin, setPin] = useState('');
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const detected = networkOfPhone(phone);
  const network: Network | null = chosen ?? (detected !== null && detected !== 'other' ? detected : null);
  const amount = parseNaira(amountText);
  const quote = useQuery({
    queryKey: ['quote', 'airtime', amount],
    queryFn: () => call('quotePrice', { service: 'airtime', wholesale: amount! }),
    enabled: confirming !== null && amount !== null && amount > 0,
  });

  async function buy() {
    if (confirming === null || network === null || amount === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'buyAirtime',
        { network, phone, amount, pin },
        { idempotencyKey: confirming },
      );
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    } catch (caught) {
      setError(caught as CallError);
      // A refusal was answered and nothing charged: the corrected try is a new intent.
      if (answeredRefusal(caught)) setConfirming(crypto.randomUUID());
    } finally {
      setBusy(false);
    }
  }

  if (confirming !== null && network !== null && amount !== null) {
    return (
      <Screen title="Confirm airtime">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>To</dt>
          <dd className="font-semibold">
            {phone} ({networkNames[network]})
          </dd>
          <dt>Airtime</dt>
          <dd className="font-semibold">{formatNaira(amount)}</dd>
          <dt>Fee</dt>
          <dd className="font-semibold">{quote.data ? formatNaira(quote.data.markup) : '…'}</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {quote.data ? formatNaira(quote.data.retail) : '…'}
          </dd>
        </dl>
        {quote.isPending ? <Waiting label="Getting the price" /> : null}
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error}
          ready={quote.data !== undefined}
          onPay={() => void buy()}
          onBack={() => setConfirming(null)}
        >
          Pay {quote.data ? formatNaira(quote.data.retail) : ''}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Buy airtime">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (network !== null && amount !== null) {
            setPin('');
            setError(null);
            setConfirming(crypto.randomUUID());
          }
        }}
      >
        <Field
          label="Phone number"
          value={phone}
          onChange={(value) => {
            setPhone(value);
            setChosen(null);
          }}
          inputMode="tel"
          autoComplete="tel"
          hint={
            detected === 'other'
              ? 'This number is on a network we do not sell.'
              : detected !== null
                ? `${networkNames[detected]} number`
                : 'Like 0803 123 4567'
          }
        />
        <fieldset className="flex flex-wrap gap-2">
          <legend className="font-medium">Network</legend>
          {networks.map((n) => (
            <label key={n} className="flex items-center gap-1 rounded-lg border px-3 py-2">
              <input type="radio" name="network" checked={network === n} onChange={() => setChosen(n)} />
              {networkNames[n]}
            </label>
          ))}
        </fieldset>
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint="From ₦50 to ₦50,000"
          error={amountText !== '' && amount === null ? 'Type an amount such as 500' : undefined}
        />
        <Button type="submit" disabled={network === null || amount === null}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/airtime')({ beforeLoad: requireSignIn, component: BuyAirtime });
