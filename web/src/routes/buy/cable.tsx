import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { localPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira } from '../../format.ts';

// Pay for cable TV: the provider, the smartcard (IUC) number and a bouquet from the catalogue at its
// retail price. The smartcard is checked with the provider first, so the summary names whose card
// it is before the PIN, which is asked last. The price sent is the one shown: if it changed
// meanwhile the service says so (PRICE_CHANGED, nothing charged) and the new price is shown to be
// confirmed again. The Idempotency-Key is made when the summary opens and kept for a retry of the
// same payment; a refusal the service answered charged nothing, so the next try gets a new one.

const providers = { dstv: 'DStv', gotv: 'GOtv', startimes: 'StarTimes', showmax: 'Showmax' } as const;
type Provider = keyof typeof providers;
type Customer = Output<'verifyCableIUC'>;

function BuyCable() {
  const navigate = useNavigate();
  const selectId = useId();
  const me = useQuery({ queryKey: ['me'], queryFn: () => call('getMe', {}) });
  const [provider, setProvider] = useState<Provider | null>(null);
  const [iuc, setIuc] = useState('');
  const [planId, setPlanId] = useState('');
  const [typedPhone, setTypedPhone] = useState<string | null>(null);
  const [customer, setCustomer] = useState<Customer | null>(null);
  const [key, setKey] = useState<string | null>(null);
  const [price, setPrice] = useState<number | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const plans = useQuery({
    queryKey: ['cable-plans', provider],
    queryFn: () => call('listCablePlans', { identifier: provider! }),
    enabled: provider !== null,
  });
  const plan = plans.data?.items.find((p) => p.plan_id === planId);
  const phone = typedPhone ?? (me.data ? localPhone(me.data.phone) : '');
  const iucValid = /^[A-Za-z0-9]{4,30}$/.test(iuc.trim());
  const ready = provider !== null && iucValid && plan !== undefined && toE164(phone) !== null;

  async function check() {
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      setCustomer(await call('verifyCableIUC', { identifier: provider, iuc: iuc.trim() }));
      setPrice(plan.amount);
      setPin('');
      setKey(crypto.randomUUID());
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  async function pay() {
    if (key === null || provider === null || plan === undefined || price === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'subscribeCable',
        { identifier: provider, iuc: iuc.trim(), plan_id: plan.plan_id, amount: price, phone, pin },
        { idempotencyKey: key },
      );
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    } catch (caught) {
      const failure = caught as CallError;
      if (answeredRefusal(failure)) setKey(crypto.randomUUID());
      if (failure.code === 'PRICE_CHANGED' && typeof failure.details?.amount === 'number') {
        setPrice(failure.details.amount);
      }
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (key !== null && customer !== null && provider !== null && plan !== undefined && price !== null) {
    const current = customer.details.Current_Bouquet;
    return (
      <Screen title="Confirm cable TV">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>Smartcard</dt>
          <dd className="font-semibold">
            {iuc.trim()} ({providers[provider]})
          </dd>
          <dt>Name</dt>
          <dd className="font-semibold" data-testid="customer">
            {customer.name}
          </dd>
          {current && current !== 'None' ? (
            <>
              <dt>Current bouquet</dt>
              <dd>{current}</dd>
            </>
          ) : null}
          <dt>Bouquet</dt>
          <dd className="font-semibold">{plan.name}</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {formatNaira(price)}
          </dd>
        </dl>
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error}
          onPay={() => void pay()}
          onBack={() => {
            setKey(null);
            setError(null);
          }}
        >
          Pay {formatNaira(price)}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Pay for cable TV">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void check();
        }}
      >
        <fieldset className="flex flex-wrap gap-2">
          <legend className="font-medium">Provider</legend>
          {(Object.keys(providers) as Provider[]).map((p) => (
            <label key={p} className="flex items-center gap-1 rounded-lg border px-3 py-2">
              <input
                type="radio"
                name="provider"
                checked={provider === p}
                onChange={() => {
                  setProvider(p);
                  setPlanId('');
                }}
              />
              {providers[p]}
            </label>
          ))}
        </fieldset>
        <Field
          label="Smartcard / IUC number"
          value={iuc}
          onChange={setIuc}
          inputMode="numeric"
          autoComplete="off"
          hint="On the decoder's sticker, or press the info button on the remote"
          error={iuc !== '' && !iucValid ? 'A smartcard number is 4 to 30 digits' : undefined}
        />
        {plans.isFetching ? <Waiting label="Loading the bouquets" /> : null}
        {plans.data ? (
          <div className="flex flex-col gap-1">
            <label htmlFor={selectId} className="font-medium">
              Bouquet
            </label>
            <select
              id={selectId}
              className="rounded-lg border border-gray-400 px-3 py-2"
              value={planId}
              onChange={(event) => setPlanId(event.target.value)}
            >
              <option value="">Choose a bouquet</option>
              {plans.data.items.map((p) => (
                <option key={p.plan_id} value={p.plan_id}>
                  {p.name} · {formatNaira(p.amount)}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <Field
          label="Phone number"
          value={phone}
          onChange={setTypedPhone}
          inputMode="tel"
          autoComplete="tel"
          hint="The provider texts the receipt here"
          error={phone !== '' && toE164(phone) === null ? 'Type a number such as 0803 123 4567' : undefined}
        />
        <ErrorNote error={error ?? (plans.error as CallError | null)} />
        <Button type="submit" busy={busy} disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/cable')({ beforeLoad: requireSignIn, component: BuyCable });
