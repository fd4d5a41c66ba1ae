import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { cableProviderNames, withoutPrice } from '../../../../src/shared/display-names.ts';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { ContactPhoneField, useContactPhone } from '../../components/contact-phone.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ProviderPicker } from '../../components/provider-picker.tsx';
import { RepeatSwitch, ScheduleForm, useRepeat } from '../../components/repeat-purchase.tsx';
import { Select } from '../../components/select.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { useServicePrice } from '../../payments/service-price.ts';
import { useCustomerCheck } from '../../payments/use-customer-check.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Pay for cable TV: the provider and the smartcard (IUC), checked with the provider first; then the
// card holder's name and current bouquet are shown, and the person renews that bouquet or changes
// to another from the catalogue, at its retail price. The summary comes before the PIN, asked last.

const providers = Object.entries(cableProviderNames).map(([id, name]) => ({ id, name }));
/** What verifyCableIUC takes. */
const smartcardPattern = /^\d{6,20}$/;
type Plan = Output<'listCablePlans'>['items'][number];
type Provider = Input<'subscribeCable'>['identifier'];
const isProvider = (id: string): id is Provider => Object.hasOwn(cableProviderNames, id);
type Subscription = 'renew' | 'change';

/** Why there is no Renew: the card has no bouquet, or one this catalogue does not sell. */
function unrenewable(currentName: string | undefined): string {
  return currentName === undefined || currentName === '' || currentName === 'None'
    ? 'This card has no bouquet yet: choose one.'
    : `Current bouquet: ${withoutPrice(currentName)}. It cannot be renewed here: choose a bouquet.`;
}

/** The card's current bouquet in the catalogue, by the code the provider gave, else by its name. */
function currentPlan(details: Record<string, string>, plans: readonly Plan[]): Plan | undefined {
  const code = details.Current_Bouquet_Code;
  const name = details.Current_Bouquet;
  return (
    plans.find((p) => code !== undefined && code !== '' && p.plan_id === code) ??
    plans.find((p) => name !== undefined && withoutPrice(p.name) === withoutPrice(name))
  );
}

function BuyCable() {
  const prefill = Route.useSearch();
  const [provider, setProvider] = useState(prefill.provider ?? '');
  const [iuc, setIuc] = useState(prefill.recipient ?? '');
  const [subscription, setSubscription] = useState<Subscription>(
    prefill.type === 'change' ? 'change' : 'renew',
  );
  const [planId, setPlanId] = useState(prefill.plan ?? '');
  const contact = useContactPhone();
  const lookup = useCustomerCheck('verifyCableIUC');
  const saveAs = useSaveAs('cable');
  const repeat = useRepeat();
  const saveRecipient = () => saveAs.save({ recipient: iuc.trim(), details: { provider } });
  const payment = usePurchase('subscribeCable', { service: 'cable', recipient: iuc.trim() }, saveRecipient);
  const plans = useQuery({
    queryKey: ['cable-plans', provider],
    queryFn: () => call('listCablePlans', { identifier: provider }),
    enabled: provider !== '',
  });

  const smartcardValid = smartcardPattern.test(iuc.trim());
  const providerName = isProvider(provider) ? cableProviderNames[provider] : '';
  // The card holder, while the provider and number are still the ones checked.
  const found = lookup.found;
  const customer =
    found !== null && found.input.identifier === provider && found.input.iuc === iuc.trim()
      ? found.customer
      : undefined;
  const current = customer && plans.data ? currentPlan(customer.details, plans.data.items) : undefined;
  const renewing = current !== undefined && subscription === 'renew';
  const plan = renewing ? current : plans.data?.items.find((p) => p.plan_id === planId);
  const price = useServicePrice(payment, plan?.amount);
  const ready = isProvider(provider) && smartcardValid && contact.valid;

  if (payment.confirming && isProvider(provider) && customer !== undefined && plan !== undefined) {
    return (
      <Screen title="Confirm cable TV">
        <PriceSummary
          rows={[
            { label: 'Smartcard', value: `${iuc.trim()} (${providerName})` },
            { label: 'Name', value: <span data-testid="customer">{customer.name}</span> },
            { label: renewing ? 'Renew' : 'Change to', value: withoutPrice(plan.name) },
          ]}
          total={price}
        />
        <SaveAs choice={saveAs} recipient={iuc.trim()} />
        <RepeatSwitch repeat={repeat} />
        {repeat.on ? (
          <ScheduleForm
            service="cable"
            order={{
              identifier: provider,
              iuc: iuc.trim(),
              plan_id: plan.plan_id,
              amount: price!,
              phone: contact.phone,
              subscription_type: renewing ? 'renew' : 'change',
            }}
            priced
            onScheduled={saveRecipient}
            onCancel={payment.close}
          />
        ) : (
          <PinPayForm
            payment={payment}
            price={price}
            onPay={(pin) =>
              payment.pay({
                identifier: provider,
                iuc: iuc.trim(),
                plan_id: plan.plan_id,
                amount: price!,
                phone: contact.phone,
                subscription_type: renewing ? 'renew' : 'change',
                pin,
              })
            }
          >
            Pay {price === undefined ? '' : formatNairaNumber(price)}
          </PinPayForm>
        )}
      </Screen>
    );
  }

  return (
    <Screen title="Pay for cable TV">
      <ServiceGate service="cable">
        <TierGate need={1} what="Paying for cable TV">
          <Beneficiaries
            service="cable"
            onPick={({ recipient, details }) => {
              setIuc(recipient);
              if (details?.provider !== undefined && isProvider(details.provider))
                setProvider(details.provider);
            }}
            describe={({ details }) =>
              details?.provider !== undefined && isProvider(details.provider)
                ? cableProviderNames[details.provider]
                : undefined
            }
          />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (!ready) return;
              if (customer === undefined) lookup.check({ identifier: provider, iuc: iuc.trim() });
              else if (plan !== undefined)
                payment.open({ recipient: iuc.trim(), provider, plan: plan.plan_id, type: subscription });
            }}
          >
            <ProviderPicker
              legend="Provider"
              name="provider"
              options={providers}
              value={provider}
              onChange={(id) => {
                setProvider(id);
                setPlanId('');
              }}
            />
            <Field
              label="Smartcard / IUC number"
              value={iuc}
              onChange={setIuc}
              inputMode="numeric"
              autoComplete="off"
              hint="On the decoder's sticker, or press the info button on the remote"
              error={iuc !== '' && !smartcardValid ? 'A smartcard number is 6 to 20 digits' : undefined}
            />
            <ContactPhoneField contact={contact} hint="The provider texts the receipt here" />
            {customer !== undefined ? (
              <div className="flex flex-col gap-3 rounded-xl bg-gray-100 p-4">
                <p>
                  Card holder: <strong data-testid="card-holder">{customer.name}</strong>
                </p>
                {plans.isPending ? <Waiting label="Loading the bouquets" /> : null}
                {current !== undefined ? (
                  <fieldset className="flex flex-col gap-2">
                    <legend className="mb-1">
                      Current bouquet:{' '}
                      <strong data-testid="current-bouquet">{withoutPrice(current.name)}</strong>
                    </legend>
                    <label className="flex items-center gap-2">
                      <input
                        type="radio"
                        name="subscription"
                        checked={subscription === 'renew'}
                        onChange={() => setSubscription('renew')}
                      />
                      <span>
                        Renew current bouquet,{' '}
                        <span className="font-semibold whitespace-nowrap">
                          {formatNairaNumber(current.amount)}
                        </span>
                      </span>
                    </label>
                    <label className="flex items-center gap-2">
                      <input
                        type="radio"
                        name="subscription"
                        checked={subscription === 'change'}
                        onChange={() => setSubscription('change')}
                      />
                      Change bouquet
                    </label>
                  </fieldset>
                ) : plans.data ? (
                  <p>{unrenewable(customer.details.Current_Bouquet)}</p>
                ) : null}
                {!renewing && plans.data ? (
                  <Select
                    label="Bouquet"
                    value={planId}
                    onChange={setPlanId}
                    placeholder="Choose a bouquet"
                    options={plans.data.items.map((p) => ({
                      value: p.plan_id,
                      label: `${withoutPrice(p.name)} · ${formatNairaNumber(p.amount)}`,
                    }))}
                  />
                ) : null}
              </div>
            ) : null}
            <ErrorNote
              error={lookup.error ?? (plans.error as CallError | null)}
              message={
                lookup.notFound
                  ? `${providerName} has no smartcard ${iuc.trim()}. Check the number and the provider.`
                  : undefined
              }
            />
            <Button
              type="submit"
              busy={lookup.busy}
              disabled={!ready || (customer !== undefined && plan === undefined)}
            >
              {customer === undefined ? 'Check smartcard' : 'Continue'}
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/cable')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: BuyCable,
});
