import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { CalendarCheck, Flame, Medal, Share2, UserPlus } from 'lucide-react';
import { type ReactNode, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { queryKeys } from '../api/queries.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNairaNumber } from '../format.ts';

// Growth (API.md section 9): the daily check-in and its streak, savings milestones, and the
// referral code with a link to share, each said in words with its money formatted.

function Card({ title, icon, children }: { title: string; icon: ReactNode; children: ReactNode }) {
  return (
    <section className="flex flex-col gap-2 rounded-xl bg-gray-100 p-4 text-gray-900">
      <h2 className="flex items-center gap-2 text-lg font-semibold">
        <span className="text-brand">{icon}</span>
        {title}
      </h2>
      {children}
    </section>
  );
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

function CheckIn() {
  const queries = useQueryClient();
  const checkin = useQuery({ queryKey: ['checkin'], queryFn: () => call('getCheckinStatus', {}) });
  const [moved, setMoved] = useState<string | null>(null);
  const claim = useMutation({
    mutationFn: () => call('claimCheckin', {}),
    onSuccess: (status) => queries.setQueryData(['checkin'], status),
  });
  const withdraw = useMutation({
    mutationFn: () => call('withdrawCheckin', {}),
    onSuccess: async ({ withdrawn }) => {
      setMoved(`${formatNairaNumber(withdrawn)} moved to your wallet.`);
      await Promise.all([
        queries.invalidateQueries({ queryKey: ['checkin'] }),
        queries.invalidateQueries({ queryKey: queryKeys.wallet }),
      ]);
    },
  });
  const status = checkin.data;

  return (
    <Card title="Daily check-in" icon={<CalendarCheck aria-hidden="true" size={22} />}>
      {checkin.isPending ? <Waiting label="Loading your check-in" /> : null}
      <ErrorNote error={(checkin.error ?? claim.error ?? withdraw.error) as CallError | null} />
      {status ? (
        <>
          <p className="flex items-center gap-2 text-lg font-semibold" data-testid="streak">
            <Flame aria-hidden="true" size={20} className="text-brand" />
            Streak: {plural(status.streak, 'day')}
          </p>
          <p>
            Check in once a day to earn{' '}
            <span className="whitespace-nowrap">{formatNairaNumber(status.reward)}</span>. Rewards so far:{' '}
            <strong className="whitespace-nowrap">{formatNairaNumber(status.accrued)}</strong>.
          </p>
          {status.claimedToday ? (
            <p>Checked in today. Come back from {formatDateTime(status.nextClaimAt)}.</p>
          ) : (
            <Button busy={claim.isPending} onClick={() => claim.mutate()}>
              Check in for {formatNairaNumber(status.reward)}
            </Button>
          )}
          <Button
            variant="secondary"
            busy={withdraw.isPending}
            disabled={status.accrued === 0}
            onClick={() => {
              setMoved(null);
              withdraw.mutate();
            }}
          >
            Move rewards to my wallet
          </Button>
          <p role="status" aria-live="polite">
            {moved}
          </p>
        </>
      ) : null}
    </Card>
  );
}

function Milestones() {
  const queries = useQueryClient();
  const milestones = useQuery({ queryKey: ['milestones'], queryFn: () => call('getPendingMilestones', {}) });
  const ack = useMutation({
    mutationFn: (threshold: number) => call('ackMilestone', { threshold }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['milestones'] }),
  });
  return (
    <Card title="Savings milestones" icon={<Medal aria-hidden="true" size={22} />}>
      <p>
        A milestone is reached each time the total you have ever locked in{' '}
        <Link to="/savings" className="text-brand underline">
          Savings
        </Link>{' '}
        passes another mark. Each one you reach shows here.
      </p>
      <ErrorNote error={(milestones.error ?? ack.error) as CallError | null} />
      {milestones.data?.length ? (
        <ul aria-label="Milestones reached" className="flex flex-col gap-2">
          {milestones.data.map((m) => (
            <li key={m.threshold} className="flex flex-col gap-2 rounded-xl border border-brand bg-white p-3">
              <p>
                Well done! You have locked{' '}
                <strong className="whitespace-nowrap">{formatNairaNumber(m.threshold)}</strong> in savings in
                all (reached {formatDateTime(m.reachedAt)}).
              </p>
              <Button variant="secondary" onClick={() => ack.mutate(m.threshold)}>
                Got it
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
    </Card>
  );
}

function Referral() {
  const referral = useQuery({ queryKey: ['referral'], queryFn: () => call('getMyReferralStatus', {}) });
  const [shared, setShared] = useState<string | null>(null);
  const status = referral.data;
  if (!status) return <ErrorNote error={referral.error as CallError | null} />;
  const link = `${location.origin}/sign-in?ref=${status.referralCode}`;

  return (
    <Card title="Invite friends" icon={<UserPlus aria-hidden="true" size={22} />}>
      <p>
        Your code: <strong>{status.referralCode}</strong>. When a friend signs up with your link and verifies
        their identity, you earn a locked bonus. It stays locked for good: it cannot be spent, sent or
        withdrawn.
      </p>
      <p>
        Locked bonus so far:{' '}
        <strong className="whitespace-nowrap">{formatNairaNumber(status.lockedBonus)}</strong>
      </p>
      <Button
        variant="secondary"
        onClick={async () => {
          if (navigator.share) {
            await navigator.share({ title: 'billrail', url: link }).catch(() => undefined);
            setShared('Link ready to share.');
          } else {
            await navigator.clipboard?.writeText(link);
            setShared('Link copied. Paste it in a message to a friend.');
          }
        }}
      >
        <span className="flex items-center justify-center gap-2">
          <Share2 aria-hidden="true" size={20} />
          Share my link
        </span>
      </Button>
      <p role="status" aria-live="polite">
        {shared}
      </p>
      {status.invitees.length > 0 ? (
        <>
          <h3 className="font-semibold">Friends you invited</h3>
          <ul aria-label="Friends you invited" className="flex flex-col gap-1">
            {status.invitees.map((friend) => (
              <li key={`${friend.name}${friend.joinedAt}`} className="flex justify-between gap-2">
                <span>{friend.name}</span>
                <span className="text-sm text-gray-700">
                  {friend.qualified ? 'Verified: bonus earned' : 'Not verified yet'}
                </span>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p className="text-sm text-gray-700">No friends have joined with your link yet.</p>
      )}
    </Card>
  );
}

function Rewards() {
  return (
    <Screen title="Rewards">
      <CheckIn />
      <Milestones />
      <Referral />
    </Screen>
  );
}

export const Route = createFileRoute('/rewards')({ beforeLoad: requireSignIn, component: Rewards });
