import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { networkNames } from '../../../../src/shared/networks.ts';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { PinPayForm } from '../../components/pin-pay-form.tsx';
import { PriceSummary } from '../../components/price-summary.tsx';
import { Select } from '../../components/select.tsx';
import { TierGate } from '../../components/tier-gate.tsx';
import { Button, ErrorNote, Screen } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { type Network, readLines } from '../../payments/pasted-lines.ts';
import { usePayment } from '../../payments/use-payment.ts';

// A bulk order (API.md section 16): lines pasted (or added one at a time) for up to 100 numbers,
// airtime with an amount each or one data plan for all, then the preview: the lines the service would
// refuse first, each with its reason, and the total. Only an order whose every line passes can be
// paid, with the PIN asked last; then the order's lines are shown as they are delivered.

type Service = 'airtime' | 'data';
type Preview = Output<'previewBulkOrder'>;
type OrderInput = Input<'createBulkOrder'>;

const linesMax = 100;
const networks = Object.keys(networkNames) as Network[];

function NewBulkOrder() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [service, setService] = useState<Service>('airtime');
  const [text, setText] = useState('');
  const [onePhone, setOnePhone] = useState('');
  const [oneAmount, setOneAmount] = useState('');
  const [network, setNetwork] = useState<Network>('mtn');
  const [planId, setPlanId] = useState('');
  const [preview, setPreview] = useState<{ input: OrderInput['lines']; answer: Preview } | null>(null);

  const plans = useQuery({
    queryKey: ['data-plans', network],
    queryFn: () => call('listDataPlans', { network }),
    enabled: service === 'data',
  });
  const plan = plans.data?.items.find((p) => p.plan_id === planId);
  const read = readLines(text, service === 'airtime');
  const unknownNetwork = service === 'airtime' ? read.lines.filter((l) => l.network === null).length : 0;
  const lines: OrderInput['lines'] = read.lines.flatMap((line) => {
    if (service === 'data') {
      return plan === undefined
        ? []
        : [{ network, phone: line.phone, amount: plan.amount, plan_id: plan.plan_id }];
    }
    return line.network === null ? [] : [{ network: line.network, phone: line.phone, amount: line.amount }];
  });
  const tooMany = lines.length > linesMax;

  const check = useMutation<Preview, CallError, OrderInput['lines']>({
    mutationFn: (input) => call('previewBulkOrder', { service, lines: input }),
    onSuccess: (answer, input) => setPreview({ input, answer }),
  });
  const payment = usePayment('createBulkOrder', {
    onDone: async (order) => {
      await queries.invalidateQueries({ queryKey: ['bulk-orders'] });
      await navigate({ to: '/bulk/$id', params: { id: order.id } });
    },
  });

  const back = () => {
    setPreview(null);
    payment.close();
  };

  if (preview !== null) {
    const refused = preview.answer.lines
      .map((line, index) => ({ ...line, index }))
      .filter((line) => !line.ok);
    const passing = preview.answer.lines.length - refused.length;
    const dropRefused = () => {
      const bad = new Set(refused.map((line) => line.index));
      const kept = preview.input.filter((_, i) => !bad.has(i));
      setText(
        kept.map((line) => (service === 'airtime' ? `${line.phone}, ${line.amount}` : line.phone)).join('\n'),
      );
      back();
    };
    return (
      <Screen title="Check your bulk order">
        {refused.length > 0 ? (
          <section
            aria-labelledby="refused-title"
            className="flex flex-col gap-2 rounded-lg bg-red-100 p-3 text-red-900"
          >
            <h2 id="refused-title" className="font-semibold">
              {refused.length} {refused.length === 1 ? 'line' : 'lines'} would be refused
            </h2>
            <ul className="flex flex-col gap-1" data-testid="refused-lines">
              {refused.map((line) => (
                <li key={line.index}>
                  Line {line.index + 1}, {line.phone}: {line.refusal?.message ?? 'refused'}
                </li>
              ))}
            </ul>
            <Button variant="secondary" onClick={dropRefused}>
              Remove these lines
            </Button>
          </section>
        ) : null}
        <PriceSummary
          rows={[
            { label: 'Service', value: service === 'airtime' ? 'Airtime' : 'Data' },
            { label: 'Lines that pass', value: `${passing} of ${preview.answer.lines.length}` },
          ]}
          total={preview.answer.total}
        />
        {refused.length === 0 ? (
          payment.confirming ? (
            <PinPayForm
              payment={payment}
              price={preview.answer.total}
              onPay={(pin) =>
                payment.pay({ service, lines: preview.input, total: preview.answer.total, pin })
              }
            >
              Pay {formatNairaNumber(preview.answer.total)}
            </PinPayForm>
          ) : (
            <Button onClick={payment.open}>Continue to pay</Button>
          )
        ) : null}
        {!payment.confirming ? (
          <Button variant="secondary" onClick={back}>
            Change lines
          </Button>
        ) : null}
      </Screen>
    );
  }

  return (
    <Screen title="New bulk order">
      <TierGate need={1} what="Bulk orders">
        <form
          className="flex flex-col gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            if (lines.length > 0 && !tooMany) check.mutate(lines);
          }}
        >
          <Select
            label="Service"
            value={service}
            onChange={(value) => setService(value as Service)}
            options={[
              { value: 'airtime', label: 'Airtime' },
              { value: 'data', label: 'Data' },
            ]}
          />
          {service === 'data' ? (
            <>
              <Select
                label="Network"
                value={network}
                onChange={(value) => {
                  setNetwork(value as Network);
                  setPlanId('');
                }}
                options={networks.map((n) => ({ value: n, label: networkNames[n] }))}
              />
              <Select
                label="Plan for every number"
                value={planId}
                onChange={setPlanId}
                placeholder={plans.isPending ? 'Loading plans…' : 'Choose a plan'}
                options={(plans.data?.items ?? []).map((p) => ({
                  value: p.plan_id,
                  label: `${p.name} · ${formatNairaNumber(p.amount)}`,
                }))}
              />
            </>
          ) : null}
          <div className="flex flex-col gap-1">
            <label htmlFor="bulk-lines" className="font-medium">
              {service === 'airtime' ? 'Numbers and amounts, one per line' : 'Numbers, one per line'}
            </label>
            <textarea
              id="bulk-lines"
              aria-describedby="bulk-lines-hint"
              className="min-h-40 rounded-lg border border-gray-400 px-3 py-2 font-mono"
              value={text}
              onChange={(event) => setText(event.target.value)}
            />
            <p id="bulk-lines-hint" className="text-sm text-gray-700">
              {service === 'airtime' ? 'Paste rows such as "08031234567, 500".' : 'Paste one number per row.'}{' '}
              Up to {linesMax} lines; {lines.length} read.
            </p>
            {read.unreadable.length > 0 || unknownNetwork > 0 || tooMany ? (
              <p className="text-sm text-red-800" role="alert">
                {read.unreadable.length > 0
                  ? `${read.unreadable.length === 1 ? 'Row' : 'Rows'} ${read.unreadable.join(', ')} could not be read and ${read.unreadable.length === 1 ? 'is' : 'are'} left out. `
                  : ''}
                {unknownNetwork > 0
                  ? `${unknownNetwork === 1 ? '1 number is' : `${unknownNetwork} numbers are`} not MTN, Glo, Airtel or 9mobile. `
                  : ''}
                {tooMany ? `At most ${linesMax} lines.` : ''}
              </p>
            ) : null}
          </div>
          <fieldset className="flex flex-col gap-2 rounded-lg border border-gray-300 p-3">
            <legend className="px-1 font-medium">Add one line</legend>
            <label className="flex flex-col gap-1">
              Phone number
              <input
                className="rounded-lg border border-gray-400 px-3 py-2"
                inputMode="tel"
                value={onePhone}
                onChange={(event) => setOnePhone(event.target.value)}
              />
            </label>
            {service === 'airtime' ? (
              <label className="flex flex-col gap-1">
                Amount (₦)
                <input
                  className="rounded-lg border border-gray-400 px-3 py-2"
                  inputMode="decimal"
                  value={oneAmount}
                  onChange={(event) => setOneAmount(event.target.value)}
                />
              </label>
            ) : null}
            <Button
              variant="secondary"
              disabled={onePhone.trim() === '' || (service === 'airtime' && oneAmount.trim() === '')}
              onClick={() => {
                const row =
                  service === 'airtime' ? `${onePhone.trim()}, ${oneAmount.trim()}` : onePhone.trim();
                setText((before) => (before.trim() === '' ? row : `${before.trimEnd()}\n${row}`));
                setOnePhone('');
                setOneAmount('');
              }}
            >
              Add line
            </Button>
          </fieldset>
          <ErrorNote error={check.error} />
          <Button
            type="submit"
            busy={check.isPending}
            disabled={lines.length === 0 || tooMany || (service === 'data' && plan === undefined)}
          >
            Check {lines.length} {lines.length === 1 ? 'line' : 'lines'}
          </Button>
        </form>
      </TierGate>
    </Screen>
  );
}

export const Route = createFileRoute('/bulk/new')({ beforeLoad: requireSignIn, component: NewBulkOrder });
