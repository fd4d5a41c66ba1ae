import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { ChevronRight, type LucideIcon, Megaphone, Vote } from 'lucide-react';
import type { ReactNode } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { DeliveredCodes } from '../components/delivered-codes.tsx';
import { notificationsKey } from '../components/nav.tsx';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime } from '../format.ts';

// The inbox (API.md section 10): polls pinned on top with their tallies and the person's vote, then
// the notifications, unread ones marked, each opening what it is about (and marked read as it
// opens), a purchase's token or PINs shown with it to copy, then the news.

type Notification = Output<'listNotifications'>['items'][number];
type Broadcast = Output<'listBroadcasts'>['items'][number];
type Poll = NonNullable<Broadcast['poll']>;

/** Where a notification leads, from its kind and data (src/notifications/messages.ts). */
type Destination =
  | { to: '/transactions/$id'; params: { id: string } }
  | { to: '/transactions'; search: { kind: 'topup' | 'bank_transfer' | 'transfer_in' | 'adjustment' } }
  | {
      to:
        | '/'
        | '/transactions'
        | '/savings'
        | '/rewards'
        | '/verify'
        | '/settings'
        | '/admin/alerts'
        | '/schedules';
    };

function destinationOf(n: Notification): Destination | null {
  switch (n.kind) {
    case 'purchase_succeeded':
    case 'purchase_failed':
      return typeof n.data.transactionId === 'string'
        ? { to: '/transactions/$id', params: { id: n.data.transactionId } }
        : { to: '/transactions' };
    // Money in: the history, showing that kind of movement.
    case 'topup_credited':
      return { to: '/transactions', search: { kind: 'topup' } };
    // A bank deposit: `transfer_credited` and `bank_transfer` are the contract's names for it, which
    // the service's rename to "bank deposit" left as they were (decision 0038).
    case 'transfer_credited':
      return { to: '/transactions', search: { kind: 'bank_transfer' } };
    case 'wallet_transfer_received':
      return { to: '/transactions', search: { kind: 'transfer_in' } };
    // An operator's correction, with its reason in the history.
    case 'wallet_adjusted':
      return { to: '/transactions', search: { kind: 'adjustment' } };
    // A freeze or its end: home, which says whether payments are refused and what to do. Money held
    // over the tier's maximum, or released: home, which shows what is held and what releases it.
    case 'account_frozen':
    case 'account_unfrozen':
    case 'balance_held':
    case 'held_released':
      return { to: '/' };
    // A copy of the person's data ready, or their account closing (or not): Settings, where the copy
    // is downloaded and the closing cancelled.
    case 'data_export_ready':
    case 'account_closing':
    case 'account_closure_cancelled':
      return { to: '/settings' };
    // A reported problem's outcome: the history, where its refund (if any) shows.
    case 'dispute_resolved':
      return { to: '/transactions' };
    case 'lock_created':
    case 'lock_matured':
    case 'lock_broken':
      return { to: '/savings' };
    case 'checkin_claimed':
    case 'milestone_reached':
    case 'referral_qualified':
      return { to: '/rewards' };
    case 'kyc_approved':
    case 'kyc_rejected':
      return { to: '/verify' };
    // A PIN changed or a sign-in elsewhere: Settings, where the person can sign out or change the PIN.
    case 'pin_changed':
    case 'new_device_sign_in':
    case 'second_factor_reset':
      return { to: '/settings' };
    case 'ops_alert':
      return { to: '/admin/alerts' };
    // A scheduled purchase skipped or paused: the schedules, where it is resumed or cancelled.
    case 'schedule_skipped':
    case 'schedule_paused':
      return { to: '/schedules' };
    default:
      return null;
  }
}

function Inbox() {
  const queries = useQueryClient();
  const notifications = useQuery({
    queryKey: [...notificationsKey, 'list'],
    queryFn: () => call('listNotifications', { limit: 50 }),
  });
  const broadcasts = useQuery({ queryKey: ['broadcasts'], queryFn: () => call('listBroadcasts', {}) });
  const refreshNotifications = () => queries.invalidateQueries({ queryKey: notificationsKey });
  const markAll = useMutation({
    mutationFn: () => call('markAllNotificationsRead', {}),
    onSuccess: refreshNotifications,
  });
  // Opening a notification leaves this screen: the mutation's own onSuccess still runs, so the
  // unread count on the tab drops once the service has it read.
  const markRead = useMutation({
    mutationFn: (id: string) => call('markNotificationRead', { id }),
    onSuccess: refreshNotifications,
  });
  const polls = broadcasts.data?.items.filter((b) => b.poll !== undefined) ?? [];
  const news = broadcasts.data?.items.filter((b) => b.poll === undefined) ?? [];
  const unread = notifications.data?.unread ?? 0;

  return (
    <Screen title="Inbox">
      <ErrorNote error={(notifications.error ?? broadcasts.error ?? markAll.error) as CallError | null} />
      <BroadcastSection id="polls" title="Polls" Icon={Vote} broadcasts={polls} pinned>
        {(b) => <PollCard poll={b.poll!} />}
      </BroadcastSection>
      <section aria-labelledby="notifications-title" className="flex flex-col gap-3">
        <div className="flex items-center justify-between gap-2">
          <h2 id="notifications-title" className="text-lg font-semibold">
            Notifications{unread > 0 ? ` (${unread} unread)` : ''}
          </h2>
          {unread > 0 ? (
            <Button variant="secondary" busy={markAll.isPending} onClick={() => markAll.mutate()}>
              Mark all read
            </Button>
          ) : null}
        </div>
        {notifications.isPending ? <Waiting label="Loading your messages" /> : null}
        <ul className="flex flex-col gap-2" aria-label="Notifications">
          {notifications.data?.items.map((n) => (
            <li key={n.id} className="flex flex-col gap-2">
              <NotificationRow notification={n} onOpen={() => n.readAt === null && markRead.mutate(n.id)} />
              <NotificationCodes notification={n} />
            </li>
          ))}
        </ul>
        {notifications.data?.items.length === 0 ? <p>No messages yet.</p> : null}
      </section>
      <BroadcastSection id="news" title="News" Icon={Megaphone} broadcasts={news}>
        {(b) => <p className="text-sm text-gray-700">{formatDateTime(b.createdAt)}</p>}
      </BroadcastSection>
    </Screen>
  );
}

/** Broadcasts of one sort under their heading, each card with what `children` adds; nothing when none. */
function BroadcastSection(props: {
  id: string;
  title: string;
  Icon: LucideIcon;
  broadcasts: readonly Broadcast[];
  /** Polls are set apart: they wait for the person's vote. */
  pinned?: boolean;
  children: (broadcast: Broadcast) => ReactNode;
}) {
  if (props.broadcasts.length === 0) return null;
  const { Icon } = props;
  return (
    <section aria-labelledby={`${props.id}-title`} className="flex flex-col gap-3">
      <h2 id={`${props.id}-title`} className="flex items-center gap-2 text-lg font-semibold">
        <Icon aria-hidden="true" size={20} className="text-brand" />
        {props.title}
      </h2>
      <ul aria-label={props.title} className="flex flex-col gap-3">
        {props.broadcasts.map((b) => (
          <li
            key={b.id}
            className={`rounded-xl p-3 ${props.pinned ? 'border-2 border-brand' : 'border border-gray-300'}`}
          >
            <p className="font-semibold">{b.title}</p>
            <p>{b.body}</p>
            {props.children(b)}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** One notification: a link to what it is about, an unread one set apart (in words too). */
function NotificationRow({ notification: n, onOpen }: { notification: Notification; onOpen: () => void }) {
  const destination = destinationOf(n);
  const unread = n.readAt === null;
  const body = (
    <>
      <span className="flex min-w-0 flex-1 flex-col gap-0.5 break-words">
        <span className="flex items-center gap-2 font-semibold">
          {unread ? (
            <>
              <span aria-hidden="true" className="h-2.5 w-2.5 shrink-0 rounded-full bg-brand" />
              <span className="sr-only">Unread: </span>
            </>
          ) : null}
          {n.title}
        </span>
        <span>{n.body}</span>
        <span className="text-sm text-gray-700">{formatDateTime(n.createdAt)}</span>
      </span>
      {destination ? <ChevronRight aria-hidden="true" size={20} className="shrink-0 text-gray-700" /> : null}
    </>
  );
  const look = `flex items-center justify-between gap-2 rounded-xl p-3 text-left text-gray-900 ${
    unread ? 'bg-brand-light' : 'bg-gray-100'
  }`;
  if (destination === null) {
    return unread ? (
      <button type="button" className={`w-full ${look}`} onClick={onOpen}>
        {body}
      </button>
    ) : (
      <div className={look}>{body}</div>
    );
  }
  return (
    <Link {...destination} className={look} onClick={onOpen}>
      {body}
    </Link>
  );
}

/**
 * The token or PINs a purchase's message carries (`data.token`, `data.pins`), copyable beside it
 * rather than inside its link: a button within a link is reachable by neither keyboard nor reader.
 */
function NotificationCodes({ notification: n }: { notification: Notification }) {
  const token = typeof n.data.token === 'string' ? n.data.token : undefined;
  const units = typeof n.data.units === 'string' ? n.data.units : undefined;
  const pins = Array.isArray(n.data.pins)
    ? n.data.pins.filter((pin): pin is string => typeof pin === 'string')
    : [];
  if (token === undefined && pins.length === 0) return null;
  return (
    <div className="pl-3" data-testid="notification-codes">
      <DeliveredCodes
        id={`notification-${n.id}`}
        {...(token === undefined ? {} : { token })}
        {...(token === undefined || units === undefined ? {} : { units })}
        {...(pins.length === 0 ? {} : { pins })}
      />
    </div>
  );
}

/** A poll: its options to vote on, then, once voted, the tallies with the person's choice marked. */
function PollCard({ poll }: { poll: Poll }) {
  const queries = useQueryClient();
  const vote = useMutation({
    mutationFn: (optionId: string) => call('votePoll', { pollId: poll.id, optionId }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['broadcasts'] }),
  });
  const total = poll.options.reduce((sum, option) => sum + option.votes, 0);
  const percent = (votes: number) => (total === 0 ? 0 : Math.round((votes / total) * 100));

  if (poll.myVote === null) {
    return (
      <fieldset className="mt-2 flex flex-col gap-2">
        <legend className="mb-2 font-medium">{poll.question}</legend>
        {poll.options.map((option) => (
          <Button
            key={option.id}
            variant="secondary"
            disabled={vote.isPending}
            onClick={() => vote.mutate(option.id)}
          >
            {option.text}
          </Button>
        ))}
        <ErrorNote error={vote.error as CallError | null} />
      </fieldset>
    );
  }
  return (
    <div className="mt-2 flex flex-col gap-2">
      <p className="font-medium">{poll.question}</p>
      <ul aria-label="Results" className="flex flex-col gap-2">
        {poll.options.map((option) => {
          const mine = option.id === poll.myVote;
          return (
            <li key={option.id} className="flex flex-col gap-1">
              <span className="flex justify-between gap-2">
                <span className={mine ? 'font-semibold' : undefined}>
                  {option.text}
                  {mine ? ' (your vote)' : ''}
                </span>
                <span className="whitespace-nowrap">
                  {option.votes} vote{option.votes === 1 ? '' : 's'} · {percent(option.votes)}%
                </span>
              </span>
              <span aria-hidden="true" className="h-2 rounded-full bg-gray-200">
                <span
                  className="block h-2 rounded-full bg-brand"
                  style={{ width: `${percent(option.votes)}%` }}
                />
              </span>
            </li>
          );
        })}
      </ul>
      <p className="text-sm text-gray-700">
        {total} vote{total === 1 ? '' : 's'} in all. Thanks for voting.
      </p>
    </div>
  );
}

export const Route = createFileRoute('/inbox')({ beforeLoad: requireSignIn, component: Inbox });
