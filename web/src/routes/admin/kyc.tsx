import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';

// Admin: the KYC submissions waiting for a person (API.md section 11), each with its document behind
// a short-lived signed link, approved or rejected with a reason.

function KycReviews() {
  const queries = useQueryClient();
  const reviews = useQuery({ queryKey: ['kyc-reviews'], queryFn: () => call('adminListKycReviews', {}) });
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const decide = useMutation({
    mutationFn: (decision: {
      userId: string;
      tier: number;
      decision: 'approve' | 'reject';
      reason?: string;
    }) => call('adminReviewKyc', decision),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['kyc-reviews'] }),
  });
  const openDocument = useMutation({
    mutationFn: (documentId: string) => call('getKycDocumentUrl', { documentId }),
    onSuccess: (link) => window.open(link.url, '_blank', 'noopener'),
  });

  return (
    <Screen title="KYC reviews">
      {reviews.isPending ? <Waiting label="Loading the submissions" /> : null}
      <ErrorNote error={(reviews.error ?? decide.error ?? openDocument.error) as CallError | null} />
      {reviews.data?.items.length === 0 ? <p>Nothing is waiting.</p> : null}
      <ul className="flex flex-col gap-3">
        {reviews.data?.items.map((r) => (
          <li key={r.submissionId} className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3">
            <p className="font-semibold">
              {[r.firstName, r.lastName].filter(Boolean).join(' ') || r.phone} · tier {r.tier}
            </p>
            <p className="text-sm">
              {r.phone} · sent {formatDateTime(r.createdAt)}
            </p>
            {/* The id other admin forms take (a user's price level, on the markups screen). */}
            <p className="break-all text-sm">User id {r.userId}</p>
            {r.documentId ? (
              <Button variant="secondary" onClick={() => openDocument.mutate(r.documentId!)}>
                View document
              </Button>
            ) : null}
            <Field
              label="Reason (for a rejection)"
              value={reasons[r.submissionId] ?? ''}
              onChange={(value) => setReasons({ ...reasons, [r.submissionId]: value })}
            />
            <div className="flex gap-2">
              <Button
                busy={decide.isPending}
                onClick={() => decide.mutate({ userId: r.userId, tier: r.tier, decision: 'approve' })}
              >
                Approve
              </Button>
              <Button
                variant="secondary"
                disabled={(reasons[r.submissionId] ?? '').trim() === ''}
                onClick={() =>
                  decide.mutate({
                    userId: r.userId,
                    tier: r.tier,
                    decision: 'reject',
                    reason: reasons[r.submissionId]!.trim(),
                  })
                }
              >
                Reject
              </Button>
            </div>
          </li>
        ))}
      </ul>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/kyc')({ beforeLoad: requireSignIn, component: KycReviews });
