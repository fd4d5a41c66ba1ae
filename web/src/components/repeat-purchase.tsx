import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type ReactNode, useId, useState } from 'react';
import { type CallError, call, type Input } from '../api/client.ts';
import { PinPad } from './pin-pad.tsx';
import { Select } from './select.tsx';
import { Button, ErrorNote, Field } from './ui.tsx';

// "Repeat this purchase" on the confirm step of the airtime, data, electricity and cable screens: a
// switch that turns the PIN's approval into a schedule (createSchedule) instead of a payment now. The
// start, how often and the end are asked first, the PIN last, as for a payment. Each run is then an
// ordinary purchase the service makes at its time; the schedules screen lists, pauses and cancels them.

export type ScheduleRequest = Input<'createSchedule'>;
type Service = ScheduleRequest['service'];
type OrderOf<S extends Service> = Extract<ScheduleRequest, { service: S }>['order'];

/** The query key of the schedules list: a new schedule refreshes it. */
export const schedulesKey = ['schedules'] as const;

const frequencies = [
  { value: 'once', label: 'Once' },
  { value: 'day', label: 'Every day' },
  { value: 'week', label: 'Every week' },
  { value: 'month', label: 'Every month (same date)' },
] as const;
type Frequency = (typeof frequencies)[number]['value'];

/** The local date and time a datetime-local field shows, for an instant. */
function localInput(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** Whether the person chose to repeat the purchase, shared by the switch and the screen. */
export function useRepeat() {
  const [on, setOn] = useState(false);
  return { on, setOn };
}
export type Repeat = ReturnType<typeof useRepeat>;

/** The switch above the PIN: pay now, or repeat this purchase on a schedule. */
export function RepeatSwitch({ repeat }: { repeat: Repeat }) {
  const id = useId();
  return (
    <div className="flex items-center gap-3 rounded-lg border border-gray-300 p-3">
      <input
        id={id}
        type="checkbox"
        className="size-5"
        checked={repeat.on}
        onChange={(event) => repeat.setOn(event.target.checked)}
      />
      <label htmlFor={id} className="font-medium">
        Repeat this purchase
      </label>
    </div>
  );
}

/**
 * The schedule's start, frequency and end, then the PIN, in place of the payment's form. Answers
 * with the schedule made by moving to the schedules screen.
 */
export function ScheduleForm<S extends Service>(props: {
  service: S;
  order: OrderOf<S>;
  /** Data plans and bouquets: their price may change; the person chooses how much more they accept. */
  priced?: boolean;
  onCancel: () => void;
  /** Once the schedule is made: the confirm step's "Save as", as a payment would save it. */
  onScheduled?: () => Promise<void>;
  children?: ReactNode;
}) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [startText, setStartText] = useState(() => localInput(new Date(Date.now() + 60 * 60_000)));
  const [every, setEvery] = useState<Frequency>('month');
  const [endText, setEndText] = useState('');
  const [tolerance, setTolerance] = useState('0');
  const [pin, setPin] = useState('');
  const start = new Date(startText);
  const end = endText === '' ? null : new Date(`${endText}T23:59`);
  const startError = Number.isNaN(start.getTime())
    ? 'Choose the date and time of the first purchase'
    : undefined;
  const endError =
    end !== null && !Number.isNaN(start.getTime()) && end.getTime() <= start.getTime()
      ? 'The end must be after the start'
      : undefined;
  const create = useMutation({
    mutationFn: (input: ScheduleRequest) => call('createSchedule', input),
    onSuccess: async () => {
      await props.onScheduled?.();
      await queries.invalidateQueries({ queryKey: schedulesKey });
      await navigate({ to: '/schedules' });
    },
  });

  return (
    <form
      className="flex flex-col gap-4"
      onSubmit={(event) => {
        event.preventDefault();
        if (startError !== undefined || endError !== undefined) return;
        create.mutate({
          service: props.service,
          order: props.order,
          startAt: start.toISOString(),
          ...(every === 'once' ? {} : { every }),
          ...(end === null || every === 'once' ? {} : { endsAt: end.toISOString() }),
          ...(props.priced ? { priceTolerancePercent: Number(tolerance) } : {}),
          pin,
        } as ScheduleRequest);
        setPin('');
      }}
    >
      <Field
        label="First purchase"
        type="datetime-local"
        value={startText}
        onChange={setStartText}
        error={startError}
      />
      <Select
        label="How often"
        value={every}
        onChange={(value) => setEvery(value as Frequency)}
        options={frequencies}
      />
      {every !== 'once' ? (
        <Field
          label="Last date (optional)"
          type="date"
          value={endText}
          onChange={setEndText}
          hint="Leave empty to repeat until you cancel"
          error={endError}
        />
      ) : null}
      {props.priced ? (
        <Select
          label="If the price goes up"
          value={tolerance}
          onChange={setTolerance}
          options={[
            { value: '0', label: 'Pause and tell me' },
            { value: '5', label: 'Still buy up to 5% more' },
            { value: '10', label: 'Still buy up to 10% more' },
            { value: '20', label: 'Still buy up to 20% more' },
          ]}
        />
      ) : null}
      <p className="text-sm text-gray-700">
        Each purchase is paid from your wallet when it is due. If your wallet cannot cover it, that one is
        skipped and we tell you; after 3 in a row the schedule pauses.
      </p>
      <PinPad label="Transaction PIN" pin={pin} onPin={setPin} />
      <ErrorNote error={create.error as CallError | null} />
      <Button type="submit" busy={create.isPending} disabled={!/^\d{4}$/.test(pin)}>
        Schedule purchase
      </Button>
      <Button variant="secondary" onClick={props.onCancel}>
        Change details
      </Button>
    </form>
  );
}
