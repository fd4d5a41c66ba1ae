import { useMutation, useQuery } from '@tanstack/react-query';
import { Download } from 'lucide-react';
import { useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { formatDateTime } from '../format.ts';
import { keep, kept } from '../offline-cache.ts';
import { Button, ErrorNote, Waiting } from './ui.tsx';

// Settings' "Download my data" (API.md 17.3, the Nigeria Data Protection Act's right to a copy): asked
// for once a day, prepared by the service in the background, then a link to the one JSON file while it
// is kept (7 days). The copy asked for last is remembered on this phone (forgotten with the session),
// so the screen finds it again after a reload; its link is signed for a few minutes only, so it is
// asked for again while the screen stays open.

/** How often a copy being prepared is asked about. */
const preparingPollMs = 3_000;
/** How often a ready copy's link is renewed: well inside its 10 minutes. */
const linkRenewMs = 4 * 60_000;

export function DataExport() {
  const [id, setId] = useState<string | null>(() => kept<{ id: string }>('data-export')?.value.id ?? null);
  const remember = (exportId: string) => {
    keep('data-export', { id: exportId });
    setId(exportId);
  };
  const request = useMutation({
    mutationFn: () => call('requestDataExport', {}),
    onSuccess: (made) => remember(made.id),
    // Asked for already (on another phone, or before signing in again): that copy is shown.
    onError: (error: CallError) => {
      const exportId = error.code === 'CONFLICT' ? error.details?.exportId : undefined;
      if (typeof exportId === 'string') remember(exportId);
    },
  });
  const exported = useQuery({
    queryKey: ['data-export', id],
    queryFn: () => call('getDataExport', { id: id! }),
    enabled: id !== null,
    refetchInterval: (query) =>
      query.state.data?.status === 'preparing'
        ? preparingPollMs
        : query.state.data?.status === 'ready'
          ? linkRenewMs
          : false,
  });
  const status = exported.data?.status;
  const refusal = request.error as CallError | null;
  // A 409: a copy was asked for in the last 24 hours (on this phone or another).
  const onceADay =
    refusal?.code === 'CONFLICT'
      ? `You already asked for a copy in the last 24 hours${whenAgain(refusal.details)}. One copy a day can be made.`
      : undefined;

  return (
    <section aria-labelledby="data-export-title" className="flex flex-col gap-3">
      <h2 id="data-export-title" className="flex items-center gap-2 text-lg font-semibold">
        <Download aria-hidden="true" size={20} className="text-brand" />
        Download my data
      </h2>
      <p className="text-sm text-gray-700">
        A copy of what billrail holds about you, in one file (JSON) a computer can read: your profile and
        verification, every wallet movement, purchases, savings, rewards, notifications, saved numbers,
        schedules, bulk orders, problems you reported and your devices. Nothing about anyone else. We prepare
        it in the background and tell you when it is ready; it is kept for 7 days.
      </p>
      {id !== null && exported.isPending ? <Waiting label="Checking your copy" /> : null}
      <ErrorNote error={exported.error as CallError | null} />
      <div role="status" aria-live="polite" data-testid="data-export-status" className="flex flex-col gap-2">
        {status === 'preparing' ? (
          <p>Your copy is being prepared. You can leave this screen: we will tell you when it is ready.</p>
        ) : null}
        {status === 'ready' && exported.data?.url !== undefined ? (
          <>
            <p>
              Your copy is ready
              {exported.data.expiresAt !== undefined
                ? ` (kept until ${formatDateTime(exported.data.expiresAt)})`
                : ''}
              .
            </p>
            <a
              href={exported.data.url}
              download
              className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white"
            >
              Download my data (JSON)
            </a>
          </>
        ) : null}
        {status === 'expired' ? <p>Your last copy has been deleted: copies are kept for 7 days.</p> : null}
      </div>
      <ErrorNote error={refusal} message={onceADay} />
      {status !== 'preparing' ? (
        <Button variant="secondary" busy={request.isPending} onClick={() => request.mutate()}>
          {id === null || status === 'expired' ? 'Prepare my data' : 'Prepare a new copy'}
        </Button>
      ) : null}
    </section>
  );
}

/** ": you can ask again from 30 Nov 2026, 14:05" when the refusal says when (details.nextAllowedAt). */
function whenAgain(details: Record<string, unknown> | undefined): string {
  const at = details?.nextAllowedAt;
  return typeof at === 'string' ? `: you can ask again from ${formatDateTime(at)}` : '';
}
