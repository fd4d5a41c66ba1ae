import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { networkNames } from '../../../../src/shared/networks.ts';
import { call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { PhoneNetworkFields, usePhoneLine } from '../../components/phone-network-fields.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { QuickAmounts } from '../../components/quick-amounts.tsx';
import { RepeatSwitch, ScheduleForm, useRepeat } from '../../components/repeat-purchase.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, Field, Screen } from '../../components/ui.tsx';
import { formatNairaNumber, parseNaira } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Buy airtime: the number (its network found as it is typed, or one tap on a saved or recent one),
// the amount, then the summary with the price, the fee and the balance, and the PIN asked last.

const quickAmounts = [100, 200, 500, 1_000, 2_000] as const;

function BuyAirtime() {
  const prefill = Route.useSearch();
  const line = usePhoneLine(prefill);
  const { phone, network } = line;
  const [amountText, setAmountText] = useState(prefill.amount?.toString() ?? '');
  const amount = parseNaira(amountText);
  const saveAs = useSaveAs('airtime');
  const repeat = useRepeat();
  const saveRecipient = () => saveAs.save(line.kept);
  const payment = usePurchase('buyAirtime', { service: 'airtime', recipient: phone }, saveRecipient);
  const quote = useQuery({
    queryKey: ['quote', 'airtime', amount],
    queryFn: () => call('quotePrice', { service: 'airtime', wholesale: amount! }),
    enabled: payment.confirming && amount !== null && amount > 0,
  });

  if (payment.confirming && network !== null && amount !== null) {
    return (
      <Screen title="Confirm airtime">
        <PriceSummary
          rows={[
            { label: 'To', value: `${phone} (${networkNames[network]})` },
            { label: 'Airtime', value: formatNairaNumber(amount) },
          ]}
          fee={quote.data?.markup}
          total={quote.data?.retail}
        />
        <SaveAs choice={saveAs} recipient={phone} />
        <RepeatSwitch repeat={repeat} />
        {repeat.on ? (
          <ScheduleForm
            service="airtime"
            order={{ network, phone, amount }}
            onScheduled={saveRecipient}
            onCancel={payment.close}
          />
        ) : (
          <PinPayForm
            payment={payment}
            price={quote.data?.retail}
            onPay={(pin) => payment.pay({ network, phone, amount, pin })}
          >
            Pay {quote.data ? formatNairaNumber(quote.data.retail) : ''}
          </PinPayForm>
        )}
      </Screen>
    );
  }

  return (
    <Screen title="Buy airtime">
      <ServiceGate service="airtime">
        <TierGate need={1} what="Buying airtime">
          <Beneficiaries service="airtime" onPick={line.pick} />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (network !== null && amount !== null) payment.open({ recipient: phone, network, amount });
            }}
          >
            <PhoneNetworkFields line={line} />
            <Field
              label="Amount (₦)"
              value={amountText}
              onChange={setAmountText}
              inputMode="decimal"
              hint="From ₦50 to ₦50,000"
              error={amountText !== '' && amount === null ? 'Type an amount such as 500' : undefined}
            />
            <QuickAmounts amounts={quickAmounts} chosen={amount} onChoose={(n) => setAmountText(String(n))} />
            <Button type="submit" disabled={network === null || amount === null}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/airtime')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: BuyAirtime,
});
