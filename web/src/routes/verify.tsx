import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, redirect } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { queryKeys, useMe } from '../api/queries.ts';
import { session } from '../api/session.ts';
import { requireSignIn } from '../auth-guard.ts';
import { describeKycRefusal } from '../components/kyc-refusals.tsx';
import { Tier2Form } from '../components/kyc-tier2-form.tsx';
import { Tier3Form } from '../components/kyc-tier3-form.tsx';
import { TierLadder } from '../components/kyc-tiers.tsx';
import { Button, ErrorNote, Screen, Waiting } from '../components/ui.tsx';

// Verification (API.md section 7): what each tier unlocks and where each stands, then the next
// tier's form. Tier 1 is a face check at the KYC provider's page; Tier 2 the NIN (after the name,
// when it is missing); Tier 3 a bank account and an ID document. Every refusal says its reason.

/** Where this tab keeps the state of the face check it started (sessionStorage: this tab only). */
const livenessStateKey = 'billrail.livenessState';
/**
 * Where a face check's result (the token and state the provider's page hands back) waits, out of
 * the address bar and the history, until this tab's /verify screen takes it (after a sign-in, when
 * the person came back signed out).
 */
const livenessReturnKey = 'billrail.livenessReturn';
type ReturnedCheck = { livenessToken: string; state?: string };

/** The face check result waiting in this tab, taken (it is used once, or not at all). */
function takeReturnedCheck(): ReturnedCheck | null {
  const text = sessionStorage.getItem(livenessReturnKey);
  if (text === null) return null;
  sessionStorage.removeItem(livenessReturnKey);
  try {
    const value = JSON.parse(text) as Partial<ReturnedCheck>;
    if (typeof value.livenessToken !== 'string') return null;
    return typeof value.state === 'string'
      ? { livenessToken: value.livenessToken, state: value.state }
      : { livenessToken: value.livenessToken };
  } catch {
    return null;
  }
}

function Kyc() {
  const queries = useQueryClient();
  const status = useQuery({ queryKey: queryKeys.kyc, queryFn: () => call('getKycStatus', {}) });
  const me = useMe();
  // A decision moves the tier and, at Tier 2, makes the name verified: both are read again.
  const done = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: queryKeys.kyc }),
      queries.invalidateQueries({ queryKey: queryKeys.me }),
    ]);
  // Tier 1: the KYC provider's face-check page, opened with the one-time state of a check this
  // device started (getKycLivenessUrl), hands its token back to `return` with that state
  // (`?livenessToken=…&state=…`), which the route moves into sessionStorage before anything shows
  // (see beforeLoad). A token that comes back with any other state (a link someone crafted to
  // attach their face check to this account, or a check finished in another tab) is never submitted.
  const [ignored, setIgnored] = useState(false);
  // From the moment the provider's page is asked for until it replaces this one, Start face check
  // stays busy: a second tap would start (and waste) another check. A page restored from the
  // back-forward cache (Back from the provider) gets the button back.
  const [leaving, setLeaving] = useState(false);
  useEffect(() => {
    const shown = (event: PageTransitionEvent) => {
      if (event.persisted) setLeaving(false);
    };
    window.addEventListener('pageshow', shown);
    return () => window.removeEventListener('pageshow', shown);
  }, []);
  const start = useMutation({
    mutationFn: () => call('getKycLivenessUrl', {}),
    onSuccess: (check) => {
      sessionStorage.setItem(livenessStateKey, check.state);
      const page = new URL(check.url, window.location.origin);
      page.searchParams.set('return', '/verify');
      setLeaving(true);
      window.location.assign(page.toString());
    },
  });
  const tier1 = useMutation({
    mutationFn: (check: { livenessToken: string; state: string }) => call('submitKycTier1', check),
    onSettled: done,
  });
  const tier1Now = status.data?.tiers.find((t) => t.tier === 1)?.status;
  // Tier 1's status when the check was submitted: if the refreshed status differs, the submit
  // reached the service even if its answer was lost, and its error no longer applies.
  const [tier1Before, setTier1Before] = useState<string | undefined>();
  useEffect(() => {
    // Submitted once the status is known (or could not be had), so that it can be compared after.
    if (status.isPending) return;
    const returned = takeReturnedCheck();
    if (returned === null) return;
    const started = sessionStorage.getItem(livenessStateKey);
    if (returned.state === undefined || started === null || returned.state !== started) {
      setIgnored(true);
      return;
    }
    sessionStorage.removeItem(livenessStateKey);
    setIgnored(false);
    setTier1Before(tier1Now);
    tier1.mutate({ livenessToken: returned.livenessToken, state: returned.state });
  });
  const tier1Landed =
    tier1.isError && tier1Now !== undefined && tier1Now !== 'none' && tier1Now !== tier1Before;
  const tier1Error = tier1Landed ? null : (tier1.error as CallError | null);
  const shownError = (status.error ?? me.error ?? start.error ?? tier1Error) as CallError | null;
  const tier = status.data?.tier ?? 0;
  const next = status.data?.tiers.find((t) => t.tier === tier + 1);

  return (
    <Screen title="Verify your identity">
      {status.isPending || me.isPending ? <Waiting label="Loading your verification" /> : null}
      {status.data ? (
        <p>
          {tier === 3
            ? 'You are fully verified.'
            : tier === 0
              ? 'Each tier unlocks more of billrail. Start with a face check.'
              : `You are at Tier ${tier}. Each tier unlocks more of billrail.`}
        </p>
      ) : null}
      {/* Live regions, always in the page (announced as they fill), in one box so that empty they
          leave one gap, not two. */}
      <div className="flex flex-col">
        <ErrorNote error={shownError} message={shownError ? describeKycRefusal(shownError) : undefined} />
        <div role="status" aria-live="polite" data-testid="liveness-ignored">
          {ignored ? (
            <p className="mt-2 rounded-lg bg-amber-100 p-3 text-amber-900">
              We could not match this face check to one started in this window, so it was not used. Start the
              face check again.
            </p>
          ) : null}
        </div>
      </div>
      {status.data ? (
        <TierLadder
          status={status.data}
          phone={me.data?.phone ?? ''}
          next={
            next?.status === 'pending' ? (
              <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
                We are checking it. We will tell you when it is done.
              </p>
            ) : tier === 0 ? (
              <Button busy={tier1.isPending || start.isPending || leaving} onClick={() => start.mutate()}>
                Start face check
              </Button>
            ) : tier === 1 && me.data ? (
              <Tier2Form me={me.data} onSettled={done} />
            ) : tier === 2 ? (
              <Tier3Form onSettled={done} />
            ) : null
          }
        />
      ) : null}
    </Screen>
  );
}

const text = (value: unknown): value is string => typeof value === 'string' && value.length <= 200;

export const Route = createFileRoute('/verify')({
  validateSearch: (search: Record<string, unknown>): { livenessToken?: string; state?: string } => ({
    ...(text(search.livenessToken) ? { livenessToken: search.livenessToken } : {}),
    ...(text(search.state) ? { state: search.state } : {}),
  }),
  // A face check's result never stays in an address: it moves to this tab's sessionStorage, and the
  // route is reloaded without it (a redirect replaces the history entry). Signed out, the sign-in
  // screen is told only to come back to /verify, which then takes the result.
  beforeLoad: ({ location, search }) => {
    if (search.livenessToken !== undefined) {
      const returned: ReturnedCheck = {
        livenessToken: search.livenessToken,
        ...(search.state === undefined ? {} : { state: search.state }),
      };
      sessionStorage.setItem(livenessReturnKey, JSON.stringify(returned));
      if (!session.signedIn()) throw redirect({ to: '/sign-in', search: { next: '/verify' }, replace: true });
      throw redirect({ to: '/verify', search: {}, replace: true });
    }
    requireSignIn({ location });
  },
  component: Kyc,
});
