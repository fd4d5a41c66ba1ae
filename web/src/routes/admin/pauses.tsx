import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { serviceNames } from '../../../../src/shared/display-names.ts';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, LongField, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';

// Admin: pausing a service (API.md section 17.4), whole or through one provider, during a provider's
// outage say: while paused, buying it is refused before any debit (SERVICE_PAUSED), the buy screen
// says it is unavailable, and scheduled runs are skipped; purchases already accepted go on. The
// pauses in force are listed, each with its Resume.

type Service = Input<'adminPauseService'>['service'];
type Provider = NonNullable<Input<'adminPauseService'>['provider']>;
type Pause = Output<'adminListPauses'>['items'][number];

const services: ReadonlyArray<{ value: Service; label: string }> = (
  ['airtime', 'data', 'cable', 'electricity', 'betting', 'education', 'airtime_to_cash', 'social'] as const
).map((value) => ({ value, label: serviceNames[value] ?? value }));

const providers: ReadonlyArray<{ value: Provider; label: string }> = [
  { value: 'data', label: 'Data provider' },
  { value: 'bills', label: 'Bills provider' },
  { value: 'social', label: 'Social provider' },
];

const reasonLengthMax = 500;
const queryKey = ['admin-pauses'] as const;

const serviceLabel = (service: string) => serviceNames[service] ?? service;
const providerLabel = (provider: string | null | undefined) =>
  provider === null || provider === undefined
    ? 'every provider'
    : `the ${(providers.find((p) => p.value === provider)?.label ?? provider).toLowerCase()}`;

function PauseItem({ pause }: { pause: Pause }) {
  const queries = useQueryClient();
  const resume = useMutation<unknown, CallError>({
    mutationFn: () =>
      call('adminResumeService', {
        service: pause.service,
        ...(pause.provider === null || pause.provider === undefined ? {} : { provider: pause.provider }),
      }),
    onSettled: () => queries.invalidateQueries({ queryKey }),
  });
  const name = `${serviceLabel(pause.service)} through ${providerLabel(pause.provider)}`;
  return (
    <li className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3" data-testid="pause">
      <p className="font-semibold">{name}</p>
      <p>“{pause.reason}”</p>
      {pause.inEffect ? null : (
        <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
          Not in effect: {serviceLabel(pause.service).toLowerCase()} is routed to another provider now. It
          stops purchases again if the service is routed back.
        </p>
      )}
      <p className="text-sm text-gray-700">Paused {formatDateTime(pause.pausedAt)}</p>
      <ErrorNote
        error={resume.error}
        message={
          resume.error?.code === 'NOT_FOUND'
            ? 'It is not paused any more: another admin resumed it.'
            : undefined
        }
      />
      <Button variant="secondary" busy={resume.isPending} onClick={() => resume.mutate()}>
        Resume {serviceLabel(pause.service)}
      </Button>
    </li>
  );
}

function Pauses() {
  const queries = useQueryClient();
  const [service, setService] = useState<Service>('airtime');
  const [provider, setProvider] = useState<Provider | ''>('');
  const [reason, setReason] = useState('');
  const pauses = useQuery({ queryKey, queryFn: () => call('adminListPauses', {}) });
  const pause = useMutation<unknown, CallError, Input<'adminPauseService'>>({
    mutationFn: (input) => call('adminPauseService', input),
    onSuccess: () => setReason(''),
    onSettled: () => queries.invalidateQueries({ queryKey }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (reason.trim() === '') return;
    pause.mutate({ service, ...(provider === '' ? {} : { provider }), reason: reason.trim() });
  };
  const items = pauses.data?.items;

  return (
    <Screen title="Pauses">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>
        While a service is paused nobody can buy it: the app says it is unavailable and nothing is charged.
        What was bought before goes on.
      </p>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Select
          label="Service"
          value={service}
          options={services}
          onChange={(value) => setService(value as Service)}
        />
        <Select
          label="Provider"
          value={provider}
          options={[
            { value: '', label: 'Every provider of the service' },
            ...providers.map((p) => ({ value: p.value, label: `${p.label} only` })),
          ]}
          onChange={(value) => setProvider(value as Provider | '')}
        />
        <LongField
          label="Reason"
          value={reason}
          onChange={setReason}
          maxLength={reasonLengthMax}
          hint="Kept with the pause and in the audit log."
        />
        <ErrorNote error={pause.error} />
        <Button type="submit" busy={pause.isPending} disabled={reason.trim() === ''}>
          Pause
        </Button>
      </form>
      <section aria-labelledby="paused-title" className="flex flex-col gap-3">
        <h2 id="paused-title" className="text-xl font-semibold">
          Paused now
        </h2>
        {pauses.isPending ? <Waiting label="Loading the pauses" /> : null}
        <ErrorNote error={pauses.error as CallError | null} />
        {items?.length === 0 ? <p>Nothing is paused.</p> : null}
        <ul aria-label="Paused services" className="flex flex-col gap-3">
          {items?.map((p) => (
            <PauseItem key={`${p.service}:${p.provider ?? ''}`} pause={p} />
          ))}
        </ul>
      </section>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/pauses')({ beforeLoad: requireSignIn, component: Pauses });
