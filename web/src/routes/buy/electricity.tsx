import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { discoName } from '../../../../src/shared/display-names.ts';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { AmountField, useNairaAmount } from '../../components/amount-field.tsx';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { ContactPhoneField, useContactPhone } from '../../components/contact-phone.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ProviderPicker } from '../../components/provider-picker.tsx';
import { QuickAmounts } from '../../components/quick-amounts.tsx';
import { RepeatSwitch, ScheduleForm, useRepeat } from '../../components/repeat-purchase.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { useCustomerCheck } from '../../payments/use-customer-check.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Buy electricity: the DisCo, prepaid or postpaid, the meter and the amount (at least ₦1,000). The
// meter is checked with the DisCo first, so the summary names whose meter it is before the PIN. A
// prepaid token shows, grouped and copyable, on the purchase's page.

/** SPEC.md "Limits": the least electricity a purchase buys. */
const minimum = 1_000;
const quickAmounts = [1_000, 2_000, 5_000, 10_000, 20_000] as const;
const meterTypes = { prepaid: 'Prepaid', postpaid: 'Postpaid' } as const;
type MeterType = keyof typeof meterTypes;
/** What verifyMeter takes. */
const meterPattern = /^\d{6,20}$/;
const isMeterType = (value: string | undefined): value is MeterType =>
  value === 'prepaid' || value === 'postpaid';

function BuyElectricity() {
  const prefill = Route.useSearch();
  const discos = useQuery({ queryKey: ['discos'], queryFn: () => call('listElectricityPlans', {}) });
  const [disco, setDisco] = useState(prefill.provider ?? '');
  const [type, setType] = useState<MeterType>(isMeterType(prefill.type) ? prefill.type : 'prepaid');
  const [meter, setMeter] = useState(prefill.recipient ?? '');
  const typed = useNairaAmount({ min: minimum }, prefill.amount);
  const amount = typed.value;
  const contact = useContactPhone();
  const lookup = useCustomerCheck('verifyMeter');
  const saveAs = useSaveAs('electricity');
  const repeat = useRepeat();
  const saveRecipient = () => saveAs.save({ recipient: meter.trim(), details: { disco, type } });
  const payment = usePurchase(
    'buyElectricity',
    { service: 'electricity', recipient: meter.trim() },
    saveRecipient,
  );

  const meterValid = meterPattern.test(meter.trim());
  const ready = disco !== '' && meterValid && typed.valid && contact.valid;
  const options = (discos.data?.items ?? []).map((d) => ({ id: d.id, name: discoName(d.name) }));
  const nameOf = (id: string | undefined) => options.find((d) => d.id === id)?.name;
  const discoShown = nameOf(disco) ?? 'the DisCo';
  const quote = useQuery({
    queryKey: ['quote', 'electricity', amount],
    queryFn: () => call('quotePrice', { service: 'electricity', wholesale: amount! }),
    enabled: payment.confirming && amount !== null,
  });

  const customer = lookup.found?.customer;
  if (payment.confirming && customer !== undefined && amount !== null) {
    const address = customer.details.Address;
    return (
      <Screen title="Confirm electricity">
        <PriceSummary
          rows={[
            { label: 'DisCo', value: discoShown },
            { label: 'Meter', value: `${meter.trim()} (${meterTypes[type]})` },
            { label: 'Name', value: <span data-testid="customer">{customer.name}</span> },
            ...(address ? [{ label: 'Address', value: address }] : []),
            { label: 'Electricity', value: formatNairaNumber(amount) },
          ]}
          fee={quote.data?.markup}
          total={quote.data?.retail}
        />
        <SaveAs choice={saveAs} recipient={meter.trim()} />
        {type === 'prepaid' ? (
          <p>Your token shows on the next screen as soon as the DisCo sends it.</p>
        ) : null}
        <ErrorNote error={quote.error as CallError | null} />
        <RepeatSwitch repeat={repeat} />
        {repeat.on ? (
          <ScheduleForm
            service="electricity"
            order={{ plan: disco, meter: meter.trim(), type, amount, phone: contact.phone }}
            onScheduled={saveRecipient}
            onCancel={payment.close}
          />
        ) : (
          <PinPayForm
            payment={payment}
            price={quote.data?.retail}
            onPay={(pin) =>
              payment.pay({ plan: disco, meter: meter.trim(), type, amount, phone: contact.phone, pin })
            }
          >
            Pay {quote.data ? formatNairaNumber(quote.data.retail) : ''}
          </PinPayForm>
        )}
      </Screen>
    );
  }

  return (
    <Screen title="Buy electricity">
      <ServiceGate service="electricity">
        <TierGate need={1} what="Buying electricity">
          <Beneficiaries
            service="electricity"
            onPick={({ recipient, details }) => {
              setMeter(recipient);
              if (details?.disco) setDisco(details.disco);
              if (isMeterType(details?.type)) setType(details.type);
            }}
            describe={({ details }) =>
              details?.disco && isMeterType(details.type)
                ? `${nameOf(details.disco) ?? ''} ${meterTypes[details.type].toLowerCase()}`.trim()
                : undefined
            }
          />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (ready)
                lookup.check({ meter: meter.trim(), plan: disco, type }, () =>
                  payment.open({
                    recipient: meter.trim(),
                    provider: disco,
                    type,
                    ...(amount === null ? {} : { amount }),
                  }),
                );
            }}
          >
            {discos.isPending ? <Waiting label="Loading the DisCos" /> : null}
            <ProviderPicker legend="DisCo" name="disco" options={options} value={disco} onChange={setDisco} />
            <fieldset className="grid grid-cols-2 gap-2">
              <legend className="mb-1 font-medium">Meter type</legend>
              {(Object.keys(meterTypes) as MeterType[]).map((t) => (
                <label
                  key={t}
                  className={`flex items-center gap-2 rounded-lg border px-3 py-2 ${
                    type === t ? 'border-brand bg-brand-light font-semibold' : 'border-gray-300'
                  }`}
                >
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
              autoComplete="off"
              hint="On the meter or your last receipt"
              error={meter !== '' && !meterValid ? 'A meter number is 6 to 20 digits' : undefined}
            />
            <AmountField amount={typed} />
            <QuickAmounts amounts={quickAmounts} chosen={amount} onChoose={(n) => typed.setText(String(n))} />
            <ContactPhoneField contact={contact} hint="The DisCo texts the receipt here" />
            <ErrorNote
              error={lookup.error ?? (discos.error as CallError | null)}
              message={
                lookup.notFound
                  ? `${discoShown} has no ${meterTypes[type].toLowerCase()} meter ${meter.trim()}. Check the number and the meter type.`
                  : undefined
              }
            />
            <Button type="submit" busy={lookup.busy} disabled={!ready}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/electricity')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: BuyElectricity,
});
