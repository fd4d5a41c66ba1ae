import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNaira } from '../format.ts';

// Growth (API.md section 9): the daily check-in and its streak, savings milestones, and the
// referral code with a link to share.

function Rewards() {
  const queries = useQueryClient();
  const checkin = useQuery({ queryKey: ['checkin'], queryFn: () => call('getCheckinStatus', {}) });
  const milestones = useQuery({ queryKey: ['milestones'], queryFn: () => call('getPendingMilestones', {}) });
  const referral = useQuery({ queryKey: ['referral'], queryFn: () => call('getMyReferralStatus', {}) });
  const [shared, setShared] = useState<string | null>(null);
  const claim = useMutation({
    mutationFn: () => call('claimCheckin', {}),
    onSuccess: (status) => queries.setQueryData(['checkin'], status),
  });
  const withdraw = useMutation({
    mutationFn: () => call('withdrawCheckin', {}),
    onSuccess: () =>
      Promise.all([
        queries.invalidateQueries({ queryKey: ['checkin'] }),
        queries.invalidateQueries({ queryKey: ['wallet'] }),
      ]),
  });
  const ack = useMutation({
    mutationFn: (threshold: number) => call('ackMilestone', { threshold }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['milestones'] }),
  });
  const link = referral.data ? `${location.origin}/sign-in?ref=${referral.data.referralCode}` : '';

  return (
    <Screen title="Rewards">
      <ErrorNote error={(checkin.error ?? claim.error ?? withdraw.error ?? ack.error) as CallError | null} />
      {checkin.isPending ? <Waiting label="Loading your check-in" /> : null}
      {checkin.data ? (
        <div className="flex flex-col gap-2 rounded-xl bg-brand-light p-4">
          <p className="text-lg font-semibold" data-testid="streak">
            Streak: {checkin.data.streak} day{checkin.data.streak === 1 ? '' : 's'}
          </p>
          <p>
            Check-in rewards so far: <strong>{formatNaira(checkin.data.accrued)}</strong>
          </p>
          {checkin.data.claimedToday ? (
            <p>Checked in today. Next check-in from {formatDateTime(checkin.data.nextClaimAt)}.</p>
          ) : (
            <Button busy={claim.isPending} onClick={() => claim.mutate()}>
              Check in for {formatNaira(checkin.data.reward)}
            </Button>
          )}
          <Button variant="secondary" busy={withdraw.isPending} onClick={() => withdraw.mutate()}>
            Move rewards to my wallet
          </Button>
        </div>
      ) : null}
      {milestones.data?.length ? (
        <ul aria-label="Milestones" className="flex flex-col gap-2">
          {milestones.data.map((m) => (
            <li key={m.threshold} className="rounded-xl border border-brand p-3">
              <p>You have saved {formatNaira(m.threshold)} in all. Well done!</p>
              <Button variant="secondary" onClick={() => ack.mutate(m.threshold)}>
                Thanks
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
      {referral.data ? (
        <div className="flex flex-col gap-2">
          <h2 className="text-lg font-semibold">Invite friends</h2>
          <p>
            Your code: <strong>{referral.data.referralCode}</strong>. You earn a locked bonus (
            {formatNaira(referral.data.lockedBonus)} so far) when a friend verifies.
          </p>
          <Button
            variant="secondary"
            onClick={async () => {
              if (navigator.share)
                await navigator.share({ title: 'billrail', url: link }).catch(() => undefined);
              else await navigator.clipboard?.writeText(link);
              setShared('Link ready to share.');
            }}
          >
            Share my link
          </Button>
          <p role="status" aria-live="polite">
            {shared}
          </p>
          <ul aria-label="Friends you invited">
            {referral.data.invitees.map((friend) => (
              <li key={`${friend.name}${friend.joinedAt}`}>
                {friend.name} · {friend.qualified ? 'verified' : 'not verified yet'}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/rewards')({ beforeLoad: requireSignIn, component: Rewards });
