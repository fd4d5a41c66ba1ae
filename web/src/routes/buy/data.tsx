import { useQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { networkOfPhone } from '../../../../src/shared/prefixes.ts';
import { answeredRefusal, type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatNaira } from '../../format.ts';

// Buy a data bundle: the number (its network found as typed), a plan from the catalogue at its
// retail price, then the PIN last. The price sent is the one shown: if it changed meanwhile the
// service says so (PRICE_CHANGED) and nothing is charged.

const networkNames = { mtn: 'MTN', glo: 'Glo', airtel: 'Airtel', '9mobile': '9mobile' } as const;

function BuyData() {
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [planId, setPlanId] = useState('');
  const [pin, setPin] = useState('');
  const [key, setKey] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const detected = networkOfPhone(phone);
  const network = detected !== null && detected !== 'other' ? detected : null;
  const plans = useQuery({
    queryKey: ['data-plans', network],
    queryFn: () => call('listDataPlans', { network: network! }),
    enabled: network !== null,
  });
  const plan = plans.data?.items.find((p) => p.plan_id === planId);

  return (
    <Screen title="Buy data">
      <form
        className="flex flex-col gap-4"
        onSubmit={async (event) => {
          event.preventDefault();
          if (network === null || plan === undefined) return;
          if (key === null) {
            setKey(crypto.randomUUID());
            return;
          }
          setBusy(true);
          setError(null);
          try {
            const purchase = await call(
              'buyData',
              { network, plan_id: plan.plan_id, phone, amount: plan.amount, pin },
              { idempotencyKey: key },
            );
            await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
          } catch (caught) {
            setError(caught as CallError);
            // A refusal was answered and nothing charged: the corrected try is a new intent.
            if (answeredRefusal(caught)) setKey(crypto.randomUUID());
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          label="Phone number"
          value={phone}
          onChange={(value) => {
            setPhone(value);
            setPlanId('');
            setKey(null);
          }}
          inputMode="tel"
          hint={
            detected === 'other'
              ? 'This number is on a network we do not sell.'
              : network !== null
                ? `${networkNames[network]} number`
                : 'Like 0803 123 4567'
          }
        />
        {plans.isFetching ? <Waiting label="Loading the plans" /> : null}
        {plans.data ? (
          <label className="flex flex-col gap-1">
            <span className="font-medium">Plan</span>
            <select
              className="rounded-lg border border-gray-400 px-3 py-2"
              value={planId}
              onChange={(event) => {
                setPlanId(event.target.value);
                setKey(null);
              }}
            >
              <option value="">Choose a plan</option>
              {plans.data.items.map((p) => (
                <option key={p.plan_id} value={p.plan_id}>
                  {p.name}
                  {p.validity ? `, ${p.validity}` : ''} · {formatNaira(p.amount)}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {key !== null && plan !== undefined ? (
          <>
            <p className="rounded-xl bg-brand-light p-4">
              {plan.name} for {phone}: you pay <strong data-testid="price">{formatNaira(plan.amount)}</strong>
            </p>
            <Field
              label="Transaction PIN"
              value={pin}
              onChange={setPin}
              type="password"
              autoComplete="off"
              inputMode="numeric"
              maxLength={4}
            />
          </>
        ) : null}
        <ErrorNote error={(error ?? plans.error) as CallError | null} />
        <Button
          type="submit"
          busy={busy}
          disabled={plan === undefined || (key !== null && !/^\d{4}$/.test(pin))}
        >
          {key === null ? 'Continue' : `Pay ${plan ? formatNaira(plan.amount) : ''}`}
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/data')({ beforeLoad: requireSignIn, component: BuyData });
