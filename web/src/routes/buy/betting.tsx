import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useId, useState } from 'react';
import { answeredRefusal, type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { LegacyPinPayForm as PinPayForm } from '../../components/legacy-pin-pay-form.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira, parseNaira } from '../../format.ts';

// Fund a betting wallet: the company, the customer id and the amount; the account is checked with
// the company first, so the summary names whose account it is, with the fee and the price, and the
// PIN is asked last. The Idempotency-Key is made when the summary opens and kept for a retry of the
// same payment; a refusal the service answered (a wrong PIN) charged nothing, so the next try gets a
// new one.

const minimum = 100;
const maximum = 500_000;
type Customer = Output<'verifyBetAccount'>;

function FundBet() {
  const navigate = useNavigate();
  const selectId = useId();
  const companies = useQuery({ queryKey: ['bet-companies'], queryFn: () => call('listBetCompanies', {}) });
  const [company, setCompany] = useState('');
  const [customerId, setCustomerId] = useState('');
  const [amountText, setAmountText] = useState('');
  const [customer, setCustomer] = useState<Customer | null>(null);
  const [key, setKey] = useState<string | null>(null);
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  const amount = parseNaira(amountText);
  const amountError =
    amountText === ''
      ? undefined
      : amount === null
        ? 'Type an amount such as 1,000'
        : amount < minimum
          ? `The minimum is ${formatNaira(minimum)}`
          : amount > maximum
            ? `The maximum is ${formatNaira(maximum)}`
            : undefined;
  const idValid = /^[A-Za-z0-9]{4,30}$/.test(customerId.trim());
  const ready = company !== '' && idValid && amount !== null && amount >= minimum && amount <= maximum;
  const companyName = companies.data?.items.find((c) => c.id === company)?.name ?? company;
  const quote = useQuery({
    queryKey: ['quote', 'betting', amount],
    queryFn: () => call('quotePrice', { service: 'betting', wholesale: amount! }),
    enabled: key !== null && amount !== null,
  });

  async function check() {
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      setCustomer(
        await call('verifyBetAccount', { betting_company: company, customer_id: customerId.trim() }),
      );
      setPin('');
      setKey(crypto.randomUUID());
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  async function pay() {
    if (key === null || amount === null) return;
    setBusy(true);
    setError(null);
    try {
      const purchase = await call(
        'fundBet',
        { betting_company: company, customer_id: customerId.trim(), amount, pin },
        { idempotencyKey: key },
      );
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    } catch (caught) {
      const failure = caught as CallError;
      if (answeredRefusal(failure)) setKey(crypto.randomUUID());
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  if (key !== null && customer !== null && amount !== null) {
    return (
      <Screen title="Confirm betting top-up">
        <dl className="grid grid-cols-2 gap-2 rounded-xl bg-brand-light p-4">
          <dt>Company</dt>
          <dd className="font-semibold">{companyName}</dd>
          <dt>Customer ID</dt>
          <dd className="font-semibold">{customerId.trim()}</dd>
          <dt>Name</dt>
          <dd className="font-semibold" data-testid="customer">
            {customer.name}
          </dd>
          <dt>Top-up</dt>
          <dd className="font-semibold">{formatNaira(amount)}</dd>
          <dt>Fee</dt>
          <dd className="font-semibold">{quote.data ? formatNaira(quote.data.markup) : '…'}</dd>
          <dt>You pay</dt>
          <dd className="text-xl font-bold" data-testid="price">
            {quote.data ? formatNaira(quote.data.retail) : '…'}
          </dd>
        </dl>
        {quote.isPending ? <Waiting label="Getting the price" /> : null}
        <PinPayForm
          pin={pin}
          onPin={setPin}
          busy={busy}
          error={error ?? (quote.error as CallError | null)}
          ready={quote.data !== undefined}
          onPay={() => void pay()}
          onBack={() => {
            setKey(null);
            setError(null);
          }}
        >
          Pay {quote.data ? formatNaira(quote.data.retail) : ''}
        </PinPayForm>
      </Screen>
    );
  }

  return (
    <Screen title="Fund a betting wallet">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          void check();
        }}
      >
        {companies.isPending ? <Waiting label="Loading the companies" /> : null}
        <div className="flex flex-col gap-1">
          <label htmlFor={selectId} className="font-medium">
            Betting company
          </label>
          <select
            id={selectId}
            className="rounded-lg border border-gray-400 px-3 py-2"
            value={company}
            onChange={(event) => setCompany(event.target.value)}
          >
            <option value="">Choose a company</option>
            {companies.data?.items.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </div>
        <Field
          label="Customer ID"
          value={customerId}
          onChange={setCustomerId}
          autoComplete="off"
          hint="Your user ID on the betting site"
          error={customerId !== '' && !idValid ? 'A customer ID is 4 to 30 letters or digits' : undefined}
        />
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          hint={`From ${formatNaira(minimum)} to ${formatNaira(maximum)}`}
          error={amountError}
        />
        <ErrorNote error={error ?? (companies.error as CallError | null)} />
        <Button type="submit" busy={busy} disabled={!ready}>
          Continue
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/betting')({ beforeLoad: requireSignIn, component: FundBet });
