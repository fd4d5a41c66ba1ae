import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { localPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira, parseNaira } from '../../format.ts';

// Buy electricity: the DisCo, prepaid or postpaid, the meter, the amount; the meter is checked with
// the DisCo first, so the summary names whose meter it is, with the fee and the price, and the PIN
// is asked last. The Idempotency-Key is made when the summary opens and kept for a retry of the same
// payment; a refusal the service answered (a wrong PIN) charged nothing, so the next try gets a new
// one. A prepaid token is shown, copyable, on the transaction's page.

const minimum = 1_000;
const meterTypes = { prepaid: 'Prepaid', postpaid: 'Postpaid' } as const;
type MeterType = keyof typeof meterTypes;
type Customer = Output<'verifyMeter'>;

function BuyElectricity() {
  const navigate = useNavigate();
  const selectId = useId();
  const me = useQuery({ queryKey: ['me'], queryFn: () => call('getMe', {}) });
  const discos = useQuery({ queryKey: ['discos'], queryFn: () => call('listElectricityPlans', {}) });
  const [disco, setDisco] = useState('');
  const [type, setType] = useState<MeterType>('prepaid');
  const [meter, setMeter] = useState('');
  const [amountText, setAmountText] = useState('');
  const [typedPhone, setTypedPhone] = useState<string | null>(null);
  const [customer, setCustomer] = useState<Customer | null>(null);
  const [key, setKey] = useState<string | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const phone = typedPhone ?? (me.data ? localPhone(me.data.phone) : '');
  const amount = parseNaira(amountText);
  const amountError =
    amountText === ''
      ? undefined
      : amount === null
        ? 'Type an amount such as 5,000'
        : amount < minimum
          ? `The minimum is ${formatNaira(minimum)}`
          : undefined;
  const meterValid = /^[A-Za-z0-9]{4,30}$/.test(meter.trim());
  const ready = disco !== '' && meterValid && amount !== null && amount >= minimum && toE164(phone) !== null;
  const discoName = discos.data?.items.find((d) => d.id === disco)?.name ?? disco;
  const quote = useQuery({
    queryKey: ['quote', 'electricity', amount],
    queryFn: () => call('quotePrice', { service: 'electricity', wholesale: amount! }),
    enabled: key !== null && amount !== null,
  });

  async function check() {
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      const found = await call('verifyMeter', { meter: meter.trim(), plan: disco, type });
      setCustomer(found);
      setPin('');
      setKey(crypto.randomUUID());
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  async function pay() {
    if (key === null || amount === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'buyElectricity',
        { plan: disco, meter: meter.trim(), type, amount, phone, pin },
        { idempotencyKey: key },
      );
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    } catch (caught) {
      const failure = caught as CallError;
      if (answeredRefusal(failure)) setKey(crypto.randomUUID());
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (key !== null && customer !== null && amount !== null) {
    const address = customer.details.Address;
    return (
      <Screen title="Confirm electricity">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>Meter</dt>
          <dd className="font-semibold">
            {meter.trim()} ({meterTypes[type]})
          </dd>
          <dt>Name</dt>
          <dd className="font-semibold" data-testid="customer">
            {customer.name}
          </dd>
          {address ? (
            <>
              <dt>Address</dt>
              <dd>{address}</dd>
            </>
          ) : null}
          <dt>DisCo</dt>
          <dd>{discoName}</dd>
          <dt>Electricity</dt>
          <dd className="font-semibold">{formatNaira(amount)}</dd>
          <dt>Fee</dt>
          <dd className="font-semibold">{quote.data ? formatNaira(quote.data.markup) : '…'}</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {quote.data ? formatNaira(quote.data.retail) : '…'}
          </dd>
        </dl>
        {quote.isPending ? <Waiting label="Getting the price" /> : null}
        {type === 'prepaid' ? (
          <p>Your token shows on the next screen as soon as the DisCo sends it.</p>
        ) : null}
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error ?? (quote.error as CallError | null)}
          ready={quote.data !== undefined}
          onPay={() => void pay()}
          onBack={() => {
            setKey(null);
            setError(null);
          }}
        >
          Pay {quote.data ? formatNaira(quote.data.retail) : ''}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Buy electricity">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void check();
        }}
      >
        {discos.isPending ? <Waiting label="Loading the DisCos" /> : null}
        <div className="flex flex-col gap-1">
          <label htmlFor={selectId} className="font-medium">
            DisCo
          </label>
          <select
            id={selectId}
            className="rounded-lg border border-gray-400 px-3 py-2"
            value={disco}
            onChange={(event) => setDisco(event.target.value)}
          >
            <option value="">Choose your DisCo</option>
            {discos.data?.items.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </div>
        <fieldset className="flex flex-wrap gap-2">
          <legend className="font-medium">Meter type</legend>
          {(Object.keys(meterTypes) as MeterType[]).map((t) => (
            <label key={t} className="flex items-center gap-1 rounded-lg border px-3 py-2">
              <input type="radio" name="meter-type" checked={type === t} onChange={() => setType(t)} />
              {meterTypes[t]}
            </label>
          ))}
        </fieldset>
        <Field
          label="Meter number"
          value={meter}
          onChange={setMeter}
          inputMode="numeric"
          hint="On the meter or your last receipt"
          error={meter !== '' && !meterValid ? 'A meter number is 4 to 30 digits' : undefined}
        />
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint={`From ${formatNaira(minimum)}`}
          error={amountError}
        />
        <Field
          label="Phone number"
          value={phone}
          onChange={setTypedPhone}
          inputMode="tel"
          autoComplete="tel"
          hint="The DisCo texts the receipt here"
          error={phone !== '' && toE164(phone) === null ? 'Type a number such as 0803 123 4567' : undefined}
        />
        <ErrorNote error={error ?? (discos.error as CallError | null)} />
        <Button type="submit" busy={busy} disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/electricity')({
  beforeLoad: requireSignIn,
  component: BuyElectricity,
});
