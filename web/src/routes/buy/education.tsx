import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { localPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira } from '../../format.ts';

// Buy exam pins (WAEC, NECO, NABTEB, JAMB): the exam, how many, the phone the pins are texted to
// (and for JAMB the profile ID), then a summary with the price and the PIN asked last; the pins are
// shown, copyable, on the transaction's page.
//
// No catalogue operation lists exam pins with their prices, so the price shown is quotePrice (the
// markup) over the exam's list price kept below. The service checks the price sent against its own
// (PRICE_CHANGED, nothing charged): when they differ, the summary shows the service's price
// (`details.amount`) and the person confirms again. The Idempotency-Key is made when the summary
// opens and kept for a retry of the same payment; a refusal the service answered charged nothing,
// so the next try gets a new one.

type Exam = 'waec' | 'waec-registration' | 'neco' | 'nabteb' | 'jamb';

/** Each pin the provider sells, at its list (wholesale) price in naira. */
const pins: ReadonlyArray<{ id: string; exam: Exam; variation?: string; name: string; listPrice: number }> = [
  { id: 'waec', exam: 'waec', name: 'WAEC result checker PIN', listPrice: 3_900 },
  { id: 'neco', exam: 'neco', name: 'NECO result checker token', listPrice: 1_300 },
  { id: 'nabteb', exam: 'nabteb', name: 'NABTEB result checker PIN', listPrice: 1_000 },
  { id: 'waec-registration', exam: 'waec-registration', name: 'WAEC registration PIN', listPrice: 18_950 },
  { id: 'jamb-utme', exam: 'jamb', variation: 'utme', name: 'JAMB UTME PIN', listPrice: 6_200 },
  { id: 'jamb-de', exam: 'jamb', variation: 'de', name: 'JAMB Direct Entry PIN', listPrice: 6_200 },
];

function BuyExamPins() {
  const navigate = useNavigate();
  const selectId = useId();
  const me = useQuery({ queryKey: ['me'], queryFn: () => call('getMe', {}) });
  const [pinId, setPinId] = useState('');
  const [quantityText, setQuantityText] = useState('1');
  const [profileId, setProfileId] = useState('');
  const [typedPhone, setTypedPhone] = useState<string | null>(null);
  const [key, setKey] = useState<string | null>(null);
  /** The service's own price, when it said the quoted one is not it. */
  const [servicePrice, setServicePrice] = useState<number | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const chosen = pins.find((p) => p.id === pinId);
  const jamb = chosen?.exam === 'jamb';
  // JAMB sells one PIN per profile; the others up to 10 at a time.
  const maxQuantity = jamb ? 1 : 10;
  const quantity = /^\d{1,2}$/.test(quantityText.trim()) ? Number(quantityText.trim()) : null;
  const quantityValid = quantity !== null && quantity >= 1 && quantity <= maxQuantity;
  const profileValid = !jamb || /^[A-Za-z0-9]{4,30}$/.test(profileId.trim());
  const phone = typedPhone ?? (me.data ? localPhone(me.data.phone) : '');
  const ready = chosen !== undefined && quantityValid && profileValid && toE164(phone) !== null;

  const quote = useQuery({
    queryKey: ['quote', 'education', chosen?.id, quantity],
    queryFn: () => call('quotePrice', { service: 'education', wholesale: chosen!.listPrice * quantity! }),
    enabled: key !== null && chosen !== undefined && quantity !== null,
  });
  const price = servicePrice ?? quote.data?.retail ?? null;

  async function pay() {
    if (key === null || chosen === undefined || quantity === null || price === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'buyEducationPin',
        {
          exam: chosen.exam,
          ...(chosen.variation === undefined ? {} : { variation: chosen.variation }),
          quantity,
          amount: price,
          phone,
          pin,
          ...(jamb ? { profile_id: profileId.trim() } : {}),
        },
        { idempotencyKey: key },
      );
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    } catch (caught) {
      const failure = caught as CallError;
      if (answeredRefusal(failure)) setKey(crypto.randomUUID());
      if (failure.code === 'PRICE_CHANGED' && typeof failure.details?.amount === 'number') {
        setServicePrice(failure.details.amount);
      }
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (key !== null && chosen !== undefined && quantity !== null) {
    return (
      <Screen title="Confirm exam pins">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>Pin</dt>
          <dd className="font-semibold">{chosen.name}</dd>
          <dt>How many</dt>
          <dd className="font-semibold">{quantity}</dd>
          {jamb ? (
            <>
              <dt>Profile ID</dt>
              <dd className="font-semibold">{profileId.trim()}</dd>
            </>
          ) : null}
          <dt>Texted to</dt>
          <dd className="font-semibold">{phone}</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {price === null ? '…' : formatNaira(price)}
          </dd>
        </dl>
        {price === null && quote.isPending ? <Waiting label="Getting the price" /> : null}
        <p>The pins show on the next screen, ready to copy.</p>
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error ?? (quote.error as CallError | null)}
          ready={price !== null}
          onPay={() => void pay()}
          onBack={() => {
            setKey(null);
            setError(null);
          }}
        >
          Pay {price === null ? '' : formatNaira(price)}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Buy exam pins">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (!ready) return;
          setPin('');
          setError(null);
          setServicePrice(null);
          setKey(crypto.randomUUID());
        }}
      >
        <div className="flex flex-col gap-1">
          <label htmlFor={selectId} className="font-medium">
            Exam pin
          </label>
          <select
            id={selectId}
            className="rounded-lg border border-gray-400 px-3 py-2"
            value={pinId}
            onChange={(event) => setPinId(event.target.value)}
          >
            <option value="">Choose a pin</option>
            {pins.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <Field
          label="How many"
          value={quantityText}
          onChange={setQuantityText}
          inputMode="numeric"
          maxLength={2}
          hint={jamb ? 'JAMB sells one PIN per profile' : 'From 1 to 10'}
          error={quantityText !== '' && !quantityValid ? `Type a number from 1 to ${maxQuantity}` : undefined}
        />
        {jamb ? (
          <Field
            label="JAMB profile ID"
            value={profileId}
            onChange={setProfileId}
            autoComplete="off"
            hint="The profile code JAMB texted you"
            error={
              profileId !== '' && !profileValid ? 'A profile ID is 4 to 30 letters or digits' : undefined
            }
          />
        ) : null}
        <Field
          label="Phone number"
          value={phone}
          onChange={setTypedPhone}
          inputMode="tel"
          autoComplete="tel"
          hint="The pins are texted here too"
          error={phone !== '' && toE164(phone) === null ? 'Type a number such as 0803 123 4567' : undefined}
        />
        <Button type="submit" disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/education')({ beforeLoad: requireSignIn, component: BuyExamPins });
