import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { type CallError, call } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime } from '../format.ts';

// The inbox (API.md section 10): notifications, then broadcasts with their polls and tallies.

function Inbox() {
  const queries = useQueryClient();
  const notifications = useQuery({
    queryKey: ['notifications'],
    queryFn: () => call('listNotifications', {}),
  });
  const broadcasts = useQuery({ queryKey: ['broadcasts'], queryFn: () => call('listBroadcasts', {}) });
  const markAll = useMutation({
    mutationFn: () => call('markAllNotificationsRead', {}),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['notifications'] }),
  });
  const vote = useMutation({
    mutationFn: (choice: { pollId: string; optionId: string }) => call('votePoll', choice),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['broadcasts'] }),
  });
  return (
    <Screen title="Inbox">
      <ErrorNote error={(notifications.error ?? broadcasts.error ?? vote.error) as CallError | null} />
      {notifications.isPending ? <Waiting label="Loading your messages" /> : null}
      {notifications.data && notifications.data.unread > 0 ? (
        <Button variant="secondary" busy={markAll.isPending} onClick={() => markAll.mutate()}>
          Mark all {notifications.data.unread} as read
        </Button>
      ) : null}
      <ul className="flex flex-col gap-2" aria-label="Notifications">
        {notifications.data?.items.map((n) => (
          <li key={n.id} className={`rounded-xl p-3 ${n.readAt === null ? 'bg-brand-light' : 'bg-gray-100'}`}>
            <p className="font-semibold">
              {n.readAt === null ? <span className="sr-only">Unread: </span> : null}
              {n.title}
            </p>
            <p>{n.body}</p>
            <p className="text-sm text-gray-700">{formatDateTime(n.createdAt)}</p>
          </li>
        ))}
      </ul>
      {notifications.data?.items.length === 0 ? <p>No messages yet.</p> : null}
      <h2 className="text-lg font-semibold">News</h2>
      <ul className="flex flex-col gap-3" aria-label="Broadcasts">
        {broadcasts.data?.items.map((b) => (
          <li key={b.id} className="rounded-xl border border-gray-300 p-3">
            <p className="font-semibold">{b.title}</p>
            <p>{b.body}</p>
            {b.poll ? (
              <fieldset className="mt-2 flex flex-col gap-2">
                <legend className="font-medium">{b.poll.question}</legend>
                {b.poll.options.map((option) => (
                  <Button
                    key={option.id}
                    variant={b.poll?.myVote === option.id ? 'primary' : 'secondary'}
                    disabled={b.poll?.myVote !== null || vote.isPending}
                    onClick={() => vote.mutate({ pollId: b.poll!.id, optionId: option.id })}
                  >
                    {option.text}
                    {b.poll?.myVote !== null ? ` · ${option.votes} vote${option.votes === 1 ? '' : 's'}` : ''}
                  </Button>
                ))}
              </fieldset>
            ) : null}
          </li>
        ))}
      </ul>
    </Screen>
  );
}

export const Route = createFileRoute('/inbox')({ beforeLoad: requireSignIn, component: Inbox });
