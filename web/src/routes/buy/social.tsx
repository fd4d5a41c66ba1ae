import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { Select } from '../../components/select.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { useServicePrice } from '../../payments/service-price.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Social media boosts (followers, likes, views): a service from the catalogue at its rate per 1,000,
// the public link and how many. The price is rate × quantity / 1,000 rounded up to the kobo, worked
// out in whole kobo as the service does, and shown before the PIN, asked last. What the panel cannot
// deliver is refunded (shown on the purchase's page).

/** rate (naira per 1,000) × quantity / 1000, rounded up to the kobo, in naira. */
function priceOf(rate: number, quantity: number): number {
  const rateKobo = BigInt(Math.round(rate * 100));
  return Number((rateKobo * BigInt(quantity) + 999n) / 1000n) / 100;
}

const count = new Intl.NumberFormat('en-NG');
const linkPattern = /^https:\/\/[^\s/]+\.[^\s/]+(\/\S*)?$/i;

function BuySocial() {
  const services = useQuery({ queryKey: ['social-services'], queryFn: () => call('listSocialServices', {}) });
  const [serviceId, setServiceId] = useState('');
  const [link, setLink] = useState('');
  const [quantityText, setQuantityText] = useState('');
  const payment = usePurchase('buySocialService', { service: 'social', recipient: link.trim() });

  const service = services.data?.items.find((s) => s.id === serviceId);
  const digits = quantityText.replace(/[,\s]/g, '');
  const quantity = /^\d{1,10}$/.test(digits) ? Number(digits) : null;
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
  const linkValid = linkPattern.test(link.trim());
  const ready = service !== undefined && linkValid && quantity !== null && quantityError === undefined;
  const price = useServicePrice(
    payment,
    service !== undefined && quantity !== null ? priceOf(service.rate, quantity) : undefined,
  );

  if (payment.confirming && service !== undefined && quantity !== null) {
    return (
      <Screen title="Confirm social boost">
        <PriceSummary
          rows={[
            { label: 'Service', value: service.name },
            { label: 'Link', value: <span className="break-all">{link.trim()}</span> },
            { label: 'How many', value: count.format(quantity) },
            {
              label: 'Rate',
              value: <span className="whitespace-nowrap">{formatNairaNumber(service.rate)} per 1,000</span>,
            },
          ]}
          total={price}
        />
        <p>Whatever cannot be delivered is refunded to your wallet.</p>
        <PinPayForm
          payment={payment}
          price={price}
          onPay={(pin) =>
            payment.pay({ serviceId: service.id, link: link.trim(), quantity, amount: price!, pin })
          }
        >
          Pay {price === undefined ? '' : formatNairaNumber(price)}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Social boosts">
      <ServiceGate service="social">
        <TierGate need={1} what="Buying social boosts">
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (ready) payment.open();
            }}
          >
            {services.isPending ? <Waiting label="Loading the services" /> : null}
            <Select
              label="Service"
              value={serviceId}
              onChange={setServiceId}
              placeholder="Choose a service"
              options={(services.data?.items ?? []).map((s) => ({
                value: s.id,
                label: `${s.name} · ${formatNairaNumber(s.rate)} per 1,000`,
              }))}
            />
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
            <ErrorNote error={services.error as CallError | null} />
            <Button type="submit" disabled={!ready}>
              Continue
            </Button>
          </form>
        </TierGate>
      </ServiceGate>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/social')({ beforeLoad: requireSignIn, component: BuySocial });
