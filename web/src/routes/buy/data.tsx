import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { networkNames } from '../../../../src/shared/networks.ts';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { PhoneNetworkFields, usePhoneLine } from '../../components/phone-network-fields.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { RepeatSwitch, ScheduleForm, useRepeat } from '../../components/repeat-purchase.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import {
  type DataPlan,
  groupPlans,
  type PlanGroup,
  planTitle,
  planTypeLabel,
} from '../../payments/data-plans.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Buy a data bundle: the number (its network found as it is typed, or one tap on a saved or recent
// one), a plan from the catalogue by type, size and validity at its retail price, then the summary
// and the PIN last. The price sent is the one shown: if it changed meanwhile the service refuses it
// (PRICE_CHANGED, nothing charged) and the plans are read again, so the summary shows the new one.

function BuyData() {
  const prefill = Route.useSearch();
  const line = usePhoneLine(prefill);
  const { phone, network } = line;
  const [planId, setPlanId] = useState(prefill.plan ?? '');
  const plans = useQuery({
    queryKey: ['data-plans', network],
    queryFn: () => call('listDataPlans', { network: network! }),
    enabled: network !== null,
  });
  const plan = plans.data?.items.find((p) => p.plan_id === planId);
  const saveAs = useSaveAs('data');
  const repeat = useRepeat();
  const saveRecipient = () => saveAs.save(line.kept);
  const payment = usePurchase('buyData', { service: 'data', recipient: phone }, saveRecipient);
  const { error, confirming } = payment;
  const { refetch } = plans;
  useEffect(() => {
    if (confirming && error?.code === 'PRICE_CHANGED') void refetch();
  }, [confirming, error, refetch]);

  if (confirming && network !== null && plan !== undefined) {
    return (
      <Screen title="Confirm data">
        <PriceSummary
          rows={[
            { label: 'To', value: `${phone} (${networkNames[network]})` },
            { label: 'Plan', value: `${planTitle(plan)} ${planTypeLabel(plan.planType)}` },
            ...(plan.validity ? [{ label: 'Valid for', value: plan.validity }] : []),
          ]}
          total={plan.amount}
        />
        <SaveAs choice={saveAs} recipient={phone} />
        <RepeatSwitch repeat={repeat} />
        {repeat.on ? (
          <ScheduleForm
            service="data"
            order={{ network, phone, plan_id: plan.plan_id, amount: plan.amount }}
            priced
            onScheduled={saveRecipient}
            onCancel={payment.close}
          />
        ) : (
          <PinPayForm
            payment={payment}
            price={plan.amount}
            onPay={(pin) => payment.pay({ network, phone, plan_id: plan.plan_id, amount: plan.amount, pin })}
          >
            Pay {formatNairaNumber(plan.amount)}
          </PinPayForm>
        )}
      </Screen>
    );
  }

  return (
    <Screen title="Buy data">
      <ServiceGate service="data">
        <TierGate need={1} what="Buying data">
          <Beneficiaries service="data" onPick={line.pick} />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (plan !== undefined)
                payment.open({
                  recipient: phone,
                  ...(network === null ? {} : { network }),
                  plan: plan.plan_id,
                });
            }}
          >
            <PhoneNetworkFields line={line} />
            {plans.isPending && network !== null ? <Waiting label="Loading the plans" /> : null}
            <ErrorNote error={plans.error as CallError | null} />
            {plans.data ? (
              <PlanPicker plans={plans.data.items} chosen={plan} onChoose={(p) => setPlanId(p.plan_id)} />
            ) : null}
            <Button type="submit" disabled={plan === undefined || toE164(phone) === null}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

/** The plans of a network: its types as tabs, then the chosen type's bundles as cards. */
function PlanPicker(props: {
  plans: readonly DataPlan[];
  chosen: DataPlan | undefined;
  onChoose: (plan: DataPlan) => void;
}) {
  const groups = groupPlans(props.plans);
  const [typeChosen, setType] = useState<string | null>(null);
  const shown: PlanGroup | undefined =
    groups.find((g) => g.planType === typeChosen) ??
    groups.find((g) => g.planType === props.chosen?.planType) ??
    groups[0];
  if (shown === undefined) return <p>There are no plans for this network right now.</p>;
  const card = (selected: boolean) =>
    `flex rounded-lg border has-[:focus-visible]:outline-3 has-[:focus-visible]:outline-accent ${
      selected ? 'border-brand bg-brand-light font-semibold' : 'border-gray-300'
    }`;
  return (
    <>
      <fieldset className="flex flex-wrap gap-2">
        <legend className="mb-1 font-medium">Plan type</legend>
        {groups.map((group) => (
          <label key={group.planType} className={`${card(group === shown)} px-3 py-1`}>
            <input
              type="radio"
              name="plan-type"
              className="sr-only"
              checked={group === shown}
              onChange={() => setType(group.planType)}
            />
            {group.label}
          </label>
        ))}
      </fieldset>
      <fieldset className="grid grid-cols-2 gap-2">
        <legend className="mb-1 font-medium">Plan</legend>
        {shown.plans.map((p) => (
          <label
            key={p.plan_id}
            className={`${card(p.plan_id === props.chosen?.plan_id)} flex-col px-3 py-2`}
          >
            <input
              type="radio"
              name="plan"
              className="sr-only"
              checked={p.plan_id === props.chosen?.plan_id}
              onChange={() => props.onChoose(p)}
            />
            <span className="text-lg font-semibold">{planTitle(p)}</span>
            {p.validity ? <span className="text-sm text-gray-700">{p.validity}</span> : null}
            <span className="whitespace-nowrap">{formatNairaNumber(p.amount)}</span>
          </label>
        ))}
      </fieldset>
    </>
  );
}

export const Route = createFileRoute('/buy/data')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: BuyData,
});
