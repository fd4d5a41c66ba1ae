import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { schedulesKey } from '../components/repeat-purchase.tsx';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNairaNumber, shownPhone } from '../format.ts';

// Scheduled purchases: what repeats, when it runs next, how many runs so far and why one paused, with
// pause, resume and cancel. New ones are made from the buy screens ("Repeat this purchase").

type Schedule = Output<'listSchedules'>['items'][number];

const serviceNames: Record<Schedule['service'], string> = {
  airtime: 'Airtime',
  data: 'Data',
  electricity: 'Electricity',
  cable: 'Cable TV',
};
const everyNames = { day: 'every day', week: 'every week', month: 'every month' } as const;
const statusNames: Record<Schedule['status'], string> = {
  active: 'Active',
  paused: 'Paused',
  ended: 'Ended',
  cancelled: 'Cancelled',
};

/** What a schedule buys, in a line: "₦500.00 to 08031234565". */
function describe(schedule: Schedule): string {
  const order = schedule.order as { amount?: number; phone?: string; meter?: string; iuc?: string };
  const to = order.meter ?? order.iuc ?? (order.phone === undefined ? '' : shownPhone(order.phone));
  const amount = typeof order.amount === 'number' ? formatNairaNumber(order.amount) : '';
  return [amount, to === '' ? '' : `to ${to}`].filter(Boolean).join(' ');
}

function ScheduleItem({ schedule }: { schedule: Schedule }) {
  const queries = useQueryClient();
  const [said, setSaid] = useState('');
  const act = useMutation({
    mutationFn: (name: 'pauseSchedule' | 'resumeSchedule' | 'cancelSchedule') =>
      call(name, { id: schedule.id }),
    onSuccess: async (changed) => {
      setSaid(`${serviceNames[changed.service]} schedule ${statusNames[changed.status].toLowerCase()}.`);
      await queries.invalidateQueries({ queryKey: schedulesKey });
    },
  });
  const open = schedule.status === 'active' || schedule.status === 'paused';
  const title = `${serviceNames[schedule.service]} ${schedule.every ? everyNames[schedule.every] : 'once'}`;
  return (
    <li className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3" data-testid="schedule">
      <div className="flex items-baseline justify-between gap-2">
        <h2 className="text-lg font-semibold">{title}</h2>
        <span className="text-sm font-semibold text-gray-700">{statusNames[schedule.status]}</span>
      </div>
      <p className="text-gray-900">{describe(schedule)}</p>
      <p className="text-sm text-gray-700">
        {open
          ? `Next: ${formatDateTime(schedule.nextRunAt)}`
          : `Last due: ${formatDateTime(schedule.nextRunAt)}`}{' '}
        · {schedule.runs} {schedule.runs === 1 ? 'purchase' : 'purchases'} so far
        {schedule.skipsInRow > 0 ? ` · ${schedule.skipsInRow} skipped in a row` : ''}
      </p>
      {schedule.pausedReason ? (
        <p className="text-sm text-amber-900">Paused: {schedule.pausedReason}</p>
      ) : null}
      {open ? (
        <div className="flex gap-2">
          {schedule.status === 'active' ? (
            <Button variant="secondary" busy={act.isPending} onClick={() => act.mutate('pauseSchedule')}>
              Pause
            </Button>
          ) : (
            <Button variant="secondary" busy={act.isPending} onClick={() => act.mutate('resumeSchedule')}>
              Resume
            </Button>
          )}
          <Button variant="secondary" busy={act.isPending} onClick={() => act.mutate('cancelSchedule')}>
            Cancel schedule
          </Button>
        </div>
      ) : null}
      <ErrorNote error={act.error as CallError | null} />
      {said !== '' ? (
        <p role="status" className="sr-only">
          {said}
        </p>
      ) : null}
    </li>
  );
}

function Schedules() {
  const list = useQuery({ queryKey: schedulesKey, queryFn: () => call('listSchedules', { limit: 100 }) });
  return (
    <Screen title="Scheduled purchases">
      {list.isPending ? <Waiting label="Loading your schedules" /> : null}
      <ErrorNote error={list.error as CallError | null} />
      {list.data !== undefined && list.data.items.length === 0 ? (
        <p className="text-gray-700">
          Nothing scheduled yet. On the airtime, data, electricity or cable screen, choose “Repeat this
          purchase” before you enter your PIN.
        </p>
      ) : null}
      <ul className="flex flex-col gap-3">
        {list.data?.items.map((schedule) => (
          <ScheduleItem key={schedule.id} schedule={schedule} />
        ))}
      </ul>
      <Link to="/buy" className="font-semibold text-brand underline">
        Buy something
      </Link>
    </Screen>
  );
}

export const Route = createFileRoute('/schedules')({ beforeLoad: requireSignIn, component: Schedules });
