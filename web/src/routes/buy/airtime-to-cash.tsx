import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { networkOfPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, ErrorNote, Field, Screen } from '../../components/ui.tsx';
import { formatNaira, parseNaira } from '../../format.ts';

// Airtime to cash: the line the airtime is shared from (its network found as it is typed) and how
// much; the service's quote then says where to share it and what the wallet gets, before the PIN,
// which is asked last. Nothing is debited: the sale is a credit, made once the provider confirms
// the airtime arrived (the transaction's page follows it). The Idempotency-Key is made when the
// summary opens and kept for a retry of the same sale; a refusal the service answered moved
// nothing, so the next try gets a new one.

const networks = ['mtn', 'glo', 'airtel', '9mobile'] as const;
type Network = (typeof networks)[number];
const networkNames: Record<Network, string> = {
  mtn: 'MTN',
  glo: 'Glo',
  airtel: 'Airtel',
  '9mobile': '9mobile',
};
const minimum = 100;
const maximum = 50_000;
type Quote = Output<'quoteAirtimeToCash'>;

function AirtimeToCash() {
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [chosen, setChosen] = useState<Network | null>(null);
  const [amountText, setAmountText] = useState('');
  const [quote, setQuote] = useState<Quote | null>(null);
  const [key, setKey] = useState<string | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const detected = networkOfPhone(phone);
  const network: Network | null = chosen ?? (detected !== null && detected !== 'other' ? detected : null);
  const amount = parseNaira(amountText);
  const amountError =
    amountText === ''
      ? undefined
      : amount === null
        ? 'Type an amount such as 1,000'
        : amount < minimum
          ? `The minimum is ${formatNaira(minimum)}`
          : amount > maximum
            ? `The maximum is ${formatNaira(maximum)}`
            : undefined;
  const ready = network !== null && detected !== null && amount !== null && amountError === undefined;

  async function quoteIt() {
    if (network === null || amount === null || !ready) return;
    setBusy(true);
    setError(null);
    try {
      setQuote(await call('quoteAirtimeToCash', { network, amount }));
      setPin('');
      setKey(crypto.randomUUID());
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  async function sell() {
    if (key === null || network === null || quote === null) return;
    setBusy(true);
    setError(null);
    try {
      const sale = await call(
        'sellAirtime',
        { network, phone, amount: quote.amount, pin },
        { idempotencyKey: key },
      );
      await navigate({ to: '/transactions/$id', params: { id: sale.id } });
    } catch (caught) {
      const failure = caught as CallError;
      if (answeredRefusal(failure)) setKey(crypto.randomUUID());
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (key !== null && quote !== null && network !== null) {
    return (
      <Screen title="Confirm airtime to cash">
        <p className="rounded-xl bg-brand-light p-4 text-lg" data-testid="terms">
          Share <strong>{formatNaira(quote.amount)}</strong> of {networkNames[network]} airtime from your line{' '}
          {phone} to <strong data-testid="send-to">{quote.sendTo}</strong>, and you get{' '}
          <strong data-testid="payout">{formatNaira(quote.payout)}</strong> in your wallet.
        </p>
        <dl className="grid grid-cols-2 gap-2">
          <dt>Rate</dt>
          <dd className="font-semibold">{quote.ratePercent}%</dd>
          <dt>You pay</dt>
          <dd className="font-semibold">Nothing from your wallet</dd>
        </dl>
        <p>
          After you confirm, share the airtime within 30 minutes. Your wallet is credited as soon as it
          arrives; if it never does, nothing moves.
        </p>
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error}
          onPay={() => void sell()}
          onBack={() => {
            setKey(null);
            setError(null);
          }}
        >
          Sell for {formatNaira(quote.payout)}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Airtime to cash">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void quoteIt();
        }}
      >
        <Field
          label="Your phone number"
          value={phone}
          onChange={(value) => {
            setPhone(value);
            setChosen(null);
          }}
          inputMode="tel"
          autoComplete="tel"
          hint={
            detected === 'other'
              ? 'This number is on a network we do not buy airtime from.'
              : detected !== null
                ? `${networkNames[detected]} number: the line you share the airtime from`
                : 'The line you share the airtime from, like 0803 123 4567'
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
          label="Airtime to sell (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint={`From ${formatNaira(minimum)} to ${formatNaira(maximum)}`}
          error={amountError}
        />
        <ErrorNote error={error} />
        <Button type="submit" busy={busy} disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/airtime-to-cash')({
  beforeLoad: requireSignIn,
  component: AirtimeToCash,
});
