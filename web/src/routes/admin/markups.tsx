import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNaira, parseNaira } from '../../format.ts';

// Admin: the markup of each VTU service (API.md section 11): a flat amount in naira plus a percentage
// of the wholesale price, for every provider of the service or for one provider (whose own markup
// wins). The markup in force is read back with two quotes (a wholesale price of ₦0 shows the flat
// part; one of ₦10,000 adds exactly the percentage in naira), so what is shown is what is charged.

type Service = Input<'adminSetMarkup'>['service'];
type Provider = NonNullable<Input<'adminSetMarkup'>['provider']>;

const services: ReadonlyArray<{ value: Service; label: string }> = [
  { value: 'airtime', label: 'Airtime' },
  { value: 'data', label: 'Data bundles' },
  { value: 'cable', label: 'Cable TV' },
  { value: 'electricity', label: 'Electricity' },
  { value: 'betting', label: 'Betting wallets' },
  { value: 'education', label: 'Exam PINs' },
  { value: 'airtime_to_cash', label: 'Airtime to cash' },
  { value: 'social', label: 'Social media boosts' },
];

const providers: ReadonlyArray<{ value: Provider; label: string }> = [
  { value: 'data', label: 'Data provider' },
  { value: 'bills', label: 'Bills provider' },
  { value: 'social', label: 'Social provider' },
];

/** The wholesale price whose markup, less the flat part, is the percentage in naira exactly. */
const PROBE = 10_000;

/** A percentage of 0 to 100 with at most two decimals, or null. */
function parsePercent(text: string): number | null {
  const cleaned = text.replace(/[%\s]/g, '');
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(cleaned)) return null;
  const n = Number(cleaned);
  return n <= 100 ? n : null;
}

const describe = (flat: number, percent: number) =>
  flat === 0 && percent === 0 ? 'no markup' : `${formatNaira(flat)} plus ${percent}% of the wholesale price`;

/** The markup in force for a service (through a provider, or the one the service is routed to). */
async function markupInForce(service: Service, provider: Provider | '') {
  const which = provider === '' ? {} : { provider };
  const [zero, probe] = await Promise.all([
    call('quotePrice', { service, wholesale: 0, ...which }),
    call('quotePrice', { service, wholesale: PROBE, ...which }),
  ]);
  const flat = zero.markup;
  // The probe's markup is the flat part plus one naira per basis point of the percentage.
  const basisPoints = Math.round(probe.markup - flat);
  return { provider: zero.provider, flat, percent: basisPoints / 100 };
}

function Markups() {
  const queries = useQueryClient();
  const [service, setService] = useState<Service>('airtime');
  const [provider, setProvider] = useState<Provider | ''>('');
  const [flatText, setFlatText] = useState('');
  const [percentText, setPercentText] = useState('');
  const [saved, setSaved] = useState<Output<'adminSetMarkup'> | null>(null);

  const current = useQuery({
    queryKey: ['markup', service, provider],
    queryFn: () => markupInForce(service, provider),
  });
  const flat = flatText.trim() === '' ? undefined : parseNaira(flatText);
  const percent = percentText.trim() === '' ? undefined : parsePercent(percentText);
  const nothing = flat === undefined && percent === undefined;
  const invalid = flat === null || percent === null;

  const save = useMutation({
    mutationFn: (input: Input<'adminSetMarkup'>) => call('adminSetMarkup', input),
    onSuccess: (stored) => {
      setSaved(stored);
      setFlatText('');
      setPercentText('');
      void queries.invalidateQueries({ queryKey: ['markup'] });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (nothing || invalid) return;
    setSaved(null);
    save.mutate({
      service,
      ...(provider === '' ? {} : { provider }),
      ...(flat !== undefined && flat !== null ? { flat } : {}),
      ...(percent !== undefined && percent !== null ? { percent } : {}),
    });
  }

  const serviceLabel = services.find((s) => s.value === service)?.label ?? service;
  const providerLabel = (p: string | null) =>
    p === null ? 'every provider' : (providers.find((x) => x.value === p)?.label ?? p).toLowerCase();

  return (
    <Screen title="Markups">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>
        Customers pay the wholesale price plus the markup: a flat amount in naira plus a percentage of the
        wholesale price. A provider's own markup wins over the one for every provider.
      </p>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Select
          label="Service"
          value={service}
          options={services}
          onChange={(value) => {
            setService(value as Service);
            setSaved(null);
          }}
        />
        <Select
          label="Provider"
          value={provider}
          options={[
            { value: '', label: 'Every provider of the service' },
            ...providers.map((p) => ({ value: p.value, label: `${p.label} only` })),
          ]}
          onChange={(value) => {
            setProvider(value as Provider | '');
            setSaved(null);
          }}
        />
        <div role="status" aria-live="polite" className="rounded-xl bg-brand-light p-3">
          {current.isPending ? <Waiting label="Reading the markup in force" /> : null}
          {current.data ? (
            <p data-testid="markup-now">
              Now: {serviceLabel} through the {providerLabel(current.data.provider)} has{' '}
              {current.data.flat === 0 && current.data.percent === 0
                ? 'no markup'
                : `a markup of ${describe(current.data.flat, current.data.percent)}`}
              .
            </p>
          ) : null}
        </div>
        <ErrorNote error={current.error as CallError | null} />
        <Field
          label="Flat amount (₦)"
          value={flatText}
          onChange={setFlatText}
          inputMode="decimal"
          hint={
            current.data
              ? `Now ${formatNaira(current.data.flat)}. Leave empty to keep it.`
              : 'Leave empty to keep it.'
          }
          error={flat === null ? 'Type an amount such as 20 or 12.50' : undefined}
        />
        <Field
          label="Percentage of the wholesale price (%)"
          value={percentText}
          onChange={setPercentText}
          inputMode="decimal"
          hint={
            current.data ? `Now ${current.data.percent}%. Leave empty to keep it.` : 'Leave empty to keep it.'
          }
          error={percent === null ? 'Type a percentage from 0 to 100, such as 2.5' : undefined}
        />
        <ErrorNote error={save.error as CallError | null} />
        <Button type="submit" busy={save.isPending} disabled={nothing || invalid}>
          Save the markup
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {saved ? (
          <p className="rounded-xl bg-green-100 p-3 text-green-900">
            Saved: {services.find((s) => s.value === saved.service)?.label ?? saved.service},{' '}
            {providerLabel(saved.provider)}: {describe(saved.flat, saved.percent)} (at{' '}
            {formatDateTime(saved.updatedAt)}).
          </p>
        ) : null}
      </div>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/markups')({ beforeLoad: requireSignIn, component: Markups });
