import { useQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { AmountField, useNairaAmount } from '../../components/amount-field.tsx';
import { Beneficiaries, SaveAs, useSaveAs } from '../../components/beneficiaries.tsx';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ProviderPicker } from '../../components/provider-picker.tsx';
import { ServiceGate } from '../../components/service-gate.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { validatePrefill } from '../../payments/prefill.ts';
import { useCustomerCheck } from '../../payments/use-customer-check.ts';
import { usePurchase } from '../../payments/use-payment.ts';

// Fund a betting wallet: the company, the customer ID and the amount. The account is checked with
// the company first, so the summary names whose account it is before the PIN, asked last.

/** What fundBet takes. */
const customerIdPattern = /^[A-Za-z0-9]{4,30}$/;

function FundBet() {
  const prefill = Route.useSearch();
  const companies = useQuery({ queryKey: ['bet-companies'], queryFn: () => call('listBetCompanies', {}) });
  const [company, setCompany] = useState(prefill.provider ?? '');
  const [customerId, setCustomerId] = useState(prefill.recipient ?? '');
  // The betting companies' own limits, as the provider states them.
  const typed = useNairaAmount({ min: 100, max: 500_000 }, prefill.amount);
  const amount = typed.value;
  const lookup = useCustomerCheck('verifyBetAccount');
  const saveAs = useSaveAs('betting');
  const payment = usePurchase('fundBet', { service: 'betting', recipient: customerId.trim() }, () =>
    saveAs.save({ recipient: customerId.trim(), details: { company } }),
  );

  const idValid = customerIdPattern.test(customerId.trim());
  const ready = company !== '' && idValid && typed.valid;
  const nameOf = (id: string | undefined) => companies.data?.items.find((c) => c.id === id)?.name;
  const companyName = nameOf(company) ?? 'the company';
  const quote = useQuery({
    queryKey: ['quote', 'betting', amount],
    queryFn: () => call('quotePrice', { service: 'betting', wholesale: amount! }),
    enabled: payment.confirming && amount !== null,
  });

  const customer = lookup.found?.customer;
  if (payment.confirming && customer !== undefined && amount !== null) {
    return (
      <Screen title="Confirm betting top-up">
        <PriceSummary
          rows={[
            { label: 'Company', value: companyName },
            { label: 'Customer ID', value: customerId.trim() },
            { label: 'Name', value: <span data-testid="customer">{customer.name}</span> },
            { label: 'Top-up', value: formatNairaNumber(amount) },
          ]}
          fee={quote.data?.markup}
          total={quote.data?.retail}
        />
        <SaveAs choice={saveAs} recipient={customerId.trim()} />
        <ErrorNote error={quote.error as CallError | null} />
        <PinPayForm
          payment={payment}
          price={quote.data?.retail}
          onPay={(pin) =>
            payment.pay({ betting_company: company, customer_id: customerId.trim(), amount, pin })
          }
        >
          Pay {quote.data ? formatNairaNumber(quote.data.retail) : ''}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Fund a betting wallet">
      <ServiceGate service="betting">
        <TierGate need={1} what="Funding a betting wallet">
          <Beneficiaries
            service="betting"
            onPick={({ recipient, details }) => {
              setCustomerId(recipient);
              if (details?.company) setCompany(details.company);
            }}
            describe={({ details }) => nameOf(details?.company)}
          />
          <form
            className="flex flex-col gap-4"
            onSubmit={(event) => {
              event.preventDefault();
              if (ready)
                lookup.check({ betting_company: company, customer_id: customerId.trim() }, () =>
                  payment.open({
                    recipient: customerId.trim(),
                    provider: company,
                    ...(amount === null ? {} : { amount }),
                  }),
                );
            }}
          >
            {companies.isPending ? <Waiting label="Loading the companies" /> : null}
            <ProviderPicker
              legend="Betting company"
              name="company"
              options={companies.data?.items ?? []}
              value={company}
              onChange={setCompany}
            />
            <Field
              label="Customer ID"
              value={customerId}
              onChange={setCustomerId}
              autoComplete="off"
              hint="Your user ID on the betting site"
              error={customerId !== '' && !idValid ? 'A customer ID is 4 to 30 letters or digits' : undefined}
            />
            <AmountField amount={typed} />
            <ErrorNote
              error={lookup.error ?? (companies.error as CallError | null)}
              message={
                lookup.notFound
                  ? `${companyName} has no customer ID ${customerId.trim()}. Check it on the betting site.`
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

export const Route = createFileRoute('/buy/betting')({
  beforeLoad: requireSignIn,
  validateSearch: validatePrefill,
  component: FundBet,
});
