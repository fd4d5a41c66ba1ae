import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { networkNames } from '../../../../src/shared/networks.ts';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import type { NetworkChoice } from '../../components/network-picker.tsx';
import { PhoneNetworkFields, usePhoneLine } from '../../components/phone-network-fields.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen } from '../../components/ui.tsx';
import { formatNairaNumber, parseNaira } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Airtime to cash: the line the airtime is shared from (its network found as it is typed) and how
// much; the service's quote then says where to share it and what the wallet receives, before the PIN,
// which is asked last. Money comes in, so nothing is debited and no balance needs to cover it: the
// sale is a credit, made once the provider confirms the airtime arrived (the transaction's page
// follows it).

const minimum = 100;
const maximum = 50_000;

function amountProblem(text: string, amount: number | null): string | undefined {
  if (text === '') return undefined;
  if (amount === null) return 'Type an amount such as 1,000';
  if (amount < minimum) return `The minimum is ${formatNairaNumber(minimum)}`;
  if (amount > maximum) return `The maximum is ${formatNairaNumber(maximum)}`;
  return undefined;
}

function lineHint(choice: NetworkChoice): string {
  if (choice.unsold) return 'This number is on a network we do not buy airtime from.';
  return choice.detected !== null
    ? `${networkNames[choice.detected]} number: the line you share the airtime from`
    : 'The line you share the airtime from, like 0803 123 4567';
}

function AirtimeToCash() {
  const prefill = Route.useSearch();
  const line = usePhoneLine(prefill);
  const { phone, network } = line;
  const [amountText, setAmountText] = useState(prefill.amount?.toString() ?? '');
  const amount = parseNaira(amountText);
  const amountError = amountProblem(amountText, amount);
  const ready = network !== null && toE164(phone) !== null && amount !== null && amountError === undefined;
  const payment = usePurchase('sellAirtime', { service: 'airtime_to_cash', recipient: phone });
  const quote = useQuery({
    queryKey: ['quote', 'airtime-to-cash', network, amount],
    queryFn: () => call('quoteAirtimeToCash', { network: network!, amount: amount! }),
    enabled: payment.confirming && ready,
  });

  if (payment.confirming && network !== null && amount !== null) {
    const terms = quote.data;
    return (
      <Screen title="Confirm airtime to cash">
        <PriceSummary
          rows={[
            { label: 'You share', value: `${formatNairaNumber(amount)} ${networkNames[network]} airtime` },
            { label: 'From your line', value: phone },
            { label: 'To', value: <span data-testid="send-to">{terms?.sendTo ?? '…'}</span> },
            { label: 'Rate', value: terms ? `${terms.ratePercent}%` : '…' },
          ]}
          total={terms?.payout}
          totalLabel="You receive"
        />
        <p>
          Nothing leaves your wallet. After you confirm, share the airtime to that number within 30 minutes.
          Your wallet is credited as soon as it arrives; if it never does, nothing moves.
        </p>
        <ErrorNote error={quote.error as CallError | null} />
        <PinPayForm
          payment={payment}
          ready={terms !== undefined}
          onPay={(pin) => {
            if (terms !== undefined) payment.pay({ network, phone, amount: terms.amount, pin });
          }}
        >
          Sell for {terms ? formatNairaNumber(terms.payout) : ''}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Airtime to cash">
      <ServiceGate service="airtime_to_cash">
        <TierGate need={1} what="Selling airtime">
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (ready && network !== null && amount !== null)
                payment.open({ recipient: phone, network, amount });
            }}
          >
            <PhoneNetworkFields label="Your phone number" line={line} hint={lineHint(line.choice)} />
            <Field
              label="Airtime to sell (₦)"
              value={amountText}
              onChange={setAmountText}
              inputMode="decimal"
              hint={`From ${formatNairaNumber(minimum)} to ${formatNairaNumber(maximum)}`}
              error={amountError}
            />
            <Button type="submit" disabled={!ready}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/airtime-to-cash')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: AirtimeToCash,
});
