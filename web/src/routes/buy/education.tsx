import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { withoutPrice } from '../../../../src/shared/display-names.ts';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { ContactPhoneField, useContactPhone } from '../../components/contact-phone.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ProviderPicker } from '../../components/provider-picker.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { useServicePrice } from '../../payments/service-price.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Buy exam pins: the exam, its pin at the service's price (listEducationPins), how many (1 to 10;
// JAMB one per profile, with the profile ID) and the phone the pins are texted to; then the summary
// with the total and the PIN asked last. The pins show, copyable, on the purchase's page.

/** The exams listEducationPins and buyEducationPin take, by the names people use. */
const exams = [
  { id: 'waec', name: 'WAEC result checker' },
  { id: 'waec-registration', name: 'WAEC registration' },
  { id: 'neco', name: 'NECO result checker' },
  { id: 'nabteb', name: 'NABTEB result checker' },
  { id: 'jamb', name: 'JAMB' },
] as const;
type Exam = (typeof exams)[number]['id'];
const examOf = (id: string | undefined): Exam | null => exams.find((e) => e.id === id)?.id ?? null;
/** What buyEducationPin takes as a JAMB profile ID. */
const profilePattern = /^[A-Za-z0-9]{4,30}$/;

/** quantity × the price of one, worked out in kobo so that no float creeps in. */
const totalOf = (amount: number, quantity: number) => (Math.round(amount * 100) * quantity) / 100;

function BuyExamPins() {
  const prefill = Route.useSearch();
  const [exam, setExam] = useState<Exam | null>(examOf(prefill.provider));
  const jamb = exam === 'jamb';
  const [variation, setVariation] = useState(prefill.plan ?? '');
  const [quantityText, setQuantityText] = useState('1');
  const [profileId, setProfileId] = useState(jamb ? (prefill.recipient ?? '') : '');
  const contact = useContactPhone(jamb ? undefined : prefill.recipient);
  const saveAs = useSaveAs('education');
  // Saved: the phone the pins are texted to, with the exam (and a JAMB profile ID) kept beside it.
  const payment = usePurchase(
    'buyEducationPin',
    { service: 'education', recipient: jamb ? profileId.trim() : contact.phone },
    () =>
      saveAs.save({
        recipient: contact.phone,
        details: { ...(exam === null ? {} : { exam }), ...(jamb ? { profileId: profileId.trim() } : {}) },
      }),
  );
  const pins = useQuery({
    queryKey: ['education-pins', exam],
    queryFn: () => call('listEducationPins', { exam: exam! }),
    enabled: exam !== null,
  });

  const items = pins.data?.items ?? [];
  // An exam with one pin has it chosen already.
  const pin = items.find((p) => p.variation === variation) ?? (items.length === 1 ? items[0] : undefined);
  // JAMB sells one PIN per profile; the others up to 10 at a time.
  const maxQuantity = jamb ? 1 : 10;
  const quantity = /^\d{1,2}$/.test(quantityText.trim()) ? Number(quantityText.trim()) : null;
  const quantityValid = quantity !== null && quantity >= 1 && quantity <= maxQuantity;
  const profileValid = !jamb || profilePattern.test(profileId.trim());
  const ready = pin !== undefined && quantityValid && profileValid && contact.valid;
  const price = useServicePrice(
    payment,
    pin !== undefined && quantity !== null ? totalOf(pin.amount, quantity) : undefined,
  );

  if (payment.confirming && exam !== null && pin !== undefined && quantity !== null) {
    return (
      <Screen title="Confirm exam pins">
        <PriceSummary
          rows={[
            { label: 'Pin', value: withoutPrice(pin.name) },
            {
              label: 'How many',
              value: (
                <>
                  {quantity} × <span className="whitespace-nowrap">{formatNairaNumber(pin.amount)}</span>
                </>
              ),
            },
            ...(jamb ? [{ label: 'Profile ID', value: profileId.trim() }] : []),
            { label: 'Texted to', value: contact.phone },
          ]}
          total={price}
        />
        <SaveAs choice={saveAs} recipient={contact.phone} />
        <p>The pins show on the next screen, ready to copy.</p>
        <PinPayForm
          payment={payment}
          price={price}
          onPay={(transactionPin) =>
            payment.pay({
              exam,
              variation: pin.variation,
              quantity,
              amount: price!,
              phone: contact.phone,
              pin: transactionPin,
              ...(jamb ? { profile_id: profileId.trim() } : {}),
            })
          }
        >
          Pay {price === undefined ? '' : formatNairaNumber(price)}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Buy exam pins">
      <ServiceGate service="education">
        <TierGate need={1} what="Buying exam pins">
          <Beneficiaries
            service="education"
            onPick={({ recipient, details }) => {
              // A recent JAMB purchase's recipient is its profile ID, not a phone.
              if (toE164(recipient) === null) {
                setExam('jamb');
                setProfileId(recipient);
                return;
              }
              contact.setPhone(recipient);
              const picked = examOf(details?.exam);
              if (picked !== null && picked !== exam) {
                setExam(picked);
                setVariation('');
              }
              if (details?.profileId) setProfileId(details.profileId);
            }}
            describe={({ details }) => exams.find((e) => e.id === details?.exam)?.name}
          />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (ready)
                payment.open({
                  ...(exam === null ? {} : { provider: exam }),
                  plan: variation,
                  recipient: jamb ? profileId.trim() : contact.phone,
                });
            }}
          >
            <ProviderPicker
              legend="Exam"
              name="exam"
              options={exams}
              value={exam ?? ''}
              onChange={(id) => {
                setExam(examOf(id));
                setVariation('');
              }}
            />
            {pins.isFetching ? <Waiting label="Getting the prices" /> : null}
            {items.length > 0 ? (
              <fieldset className="flex flex-col gap-2">
                <legend className="mb-1 font-medium">Pin</legend>
                {items.map((p) => (
                  <label key={p.variation} className="flex items-center gap-2">
                    <input
                      type="radio"
                      name="variation"
                      checked={pin?.variation === p.variation}
                      onChange={() => setVariation(p.variation)}
                    />
                    <span>
                      {withoutPrice(p.name)},{' '}
                      <span className="font-semibold whitespace-nowrap">{formatNairaNumber(p.amount)}</span>{' '}
                      each
                    </span>
                  </label>
                ))}
              </fieldset>
            ) : null}
            <Field
              label="How many"
              value={quantityText}
              onChange={setQuantityText}
              inputMode="numeric"
              maxLength={2}
              hint={jamb ? 'JAMB sells one PIN per profile' : 'From 1 to 10'}
              error={
                quantityText !== '' && !quantityValid ? `Type a number from 1 to ${maxQuantity}` : undefined
              }
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
            <ContactPhoneField contact={contact} hint="The pins are texted here too" />
            <ErrorNote error={pins.error as CallError | null} />
            <Button type="submit" disabled={!ready}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/education')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: BuyExamPins,
});
