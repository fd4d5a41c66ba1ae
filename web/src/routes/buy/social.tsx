import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { answeredRefusal, type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira } from '../../format.ts';

// Social media boosts (followers, likes, views): a service from the catalogue at its rate per 1,000,
// the public link and how many; the price is the rate × quantity / 1,000 rounded up to the kobo,
// worked out in whole kobo as the service does, shown before the PIN, which is asked last. If the
// rate changed meanwhile the service says so (PRICE_CHANGED, nothing charged) and the new price is
// shown to be confirmed again. The Idempotency-Key is made when the summary opens and kept for a
// retry of the same order; a refusal the service answered charged nothing, so the next try gets a
// new one. What the panel cannot deliver is refunded (shown on the transaction's page).

/** rate (naira per 1,000) × quantity / 1000, rounded up to the kobo, in naira. */
function priceOf(rate: number, quantity: number): number {
  const rateKobo = BigInt(Math.round(rate * 100));
  return Number((rateKobo * BigInt(quantity) + 999n) / 1000n) / 100;
}

const count = new Intl.NumberFormat('en-NG');

function BuySocial() {
  const navigate = useNavigate();
  const selectId = useId();
  const services = useQuery({ queryKey: ['social-services'], queryFn: () => call('listSocialServices', {}) });
  const [serviceId, setServiceId] = useState('');
  const [link, setLink] = useState('');
  const [quantityText, setQuantityText] = useState('');
  const [key, setKey] = useState<string | null>(null);
  const [price, setPrice] = useState<number | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const service = services.data?.items.find((s) => s.id === serviceId);
  const categories = [...new Set(services.data?.items.map((s) => s.category))];
  const quantity = /^\d{1,10}$/.test(quantityText.replace(/[,\s]/g, ''))
    ? Number(quantityText.replace(/[,\s]/g, ''))
    : null;
  const quantityError =
    quantityText === '' || service === undefined
      ? undefined
      : quantity === null
        ? 'Type a whole number such as 1,000'
        : quantity < service.min
          ? `The minimum is ${count.format(service.min)}`
          : quantity > service.max
            ? `The maximum is ${count.format(service.max)}`
            : undefined;
  const linkValid = /^https:\/\/[^\s/]+\.[^\s/]+(\/\S*)?$/i.test(link.trim());
  const ready =
    service !== undefined && linkValid && quantity !== null && quantityError === undefined && quantity > 0;

  async function pay() {
    if (key === null || service === undefined || quantity === null || price === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'buySocialService',
        { serviceId: service.id, link: link.trim(), quantity, amount: price, pin },
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

  if (key !== null && service !== undefined && quantity !== null && price !== null) {
    return (
      <Screen title="Confirm social boost">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>Service</dt>
          <dd className="font-semibold">{service.name}</dd>
          <dt>Link</dt>
          <dd className="break-all font-semibold">{link.trim()}</dd>
          <dt>How many</dt>
          <dd className="font-semibold">{count.format(quantity)}</dd>
          <dt>Rate</dt>
          <dd>{formatNaira(service.rate)} per 1,000</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {formatNaira(price)}
          </dd>
        </dl>
        <p>Whatever cannot be delivered is refunded to your wallet.</p>
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
    <Screen title="Social boosts">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (!ready) return;
          setPrice(priceOf(service.rate, quantity));
          setPin('');
          setError(null);
          setKey(crypto.randomUUID());
        }}
      >
        {services.isPending ? <Waiting label="Loading the services" /> : null}
        <div className="flex flex-col gap-1">
          <label htmlFor={selectId} className="font-medium">
            Service
          </label>
          <select
            id={selectId}
            className="rounded-lg border border-gray-400 px-3 py-2"
            value={serviceId}
            onChange={(event) => setServiceId(event.target.value)}
          >
            <option value="">Choose a service</option>
            {categories.map((category) => (
              <optgroup key={category} label={category}>
                {services.data?.items
                  .filter((s) => s.category === category)
                  .map((s) => (
                    <option key={s.id} value={s.id}>
                      {s.name} · {formatNaira(s.rate)} per 1,000
                    </option>
                  ))}
              </optgroup>
            ))}
          </select>
        </div>
        <Field
          label="Link"
          value={link}
          onChange={setLink}
          type="url"
          autoComplete="url"
          hint="The public post or profile, starting https://"
          error={link !== '' && !linkValid ? 'Paste a link that starts with https://' : undefined}
        />
        <Field
          label="How many"
          value={quantityText}
          onChange={setQuantityText}
          inputMode="numeric"
          hint={
            service
              ? `From ${count.format(service.min)} to ${count.format(service.max)}`
              : 'Choose a service first'
          }
          error={quantityError}
        />
        {ready ? (
          <p>
            Price: <strong>{formatNaira(priceOf(service.rate, quantity))}</strong>
          </p>
        ) : null}
        <ErrorNote error={services.error as CallError | null} />
        <Button type="submit" disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/social')({ beforeLoad: requireSignIn, component: BuySocial });
