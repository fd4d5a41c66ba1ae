import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, redirect } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Field, Screen, Waiting } from '../components/ui.tsx';

// Verification (API.md section 7): where each tier stands, then the next one's form. Tier 2 is the
// NIN; tier 3 a bank account and an ID document (a photo or PDF, sent as the contract asks: base64).

const documentTypes = [
  { value: 'passport', label: 'International passport' },
  { value: 'drivers_licence', label: "Driver's licence" },
  { value: 'voters_card', label: "Voter's card" },
  { value: 'nin_slip', label: 'NIN slip' },
] as const;
type DocumentType = (typeof documentTypes)[number]['value'];
type Mime = 'image/jpeg' | 'image/png' | 'application/pdf';
const statusWords = {
  none: 'not started',
  pending: 'being checked',
  approved: 'approved',
  rejected: 'not approved',
};
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
/** Refusals of submitKycTier1: the check's state is expired, used or unknown, or the token is spent. */
const refusedCheckWords = 'That face check expired or was already used. Start the face check again.';
/** The largest document the form sends, in bytes, before base64. */
const documentBytesMax = 5 * 1024 * 1024;

function readAsBase64(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ''));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

function Kyc() {
  const queries = useQueryClient();
  const status = useQuery({ queryKey: ['kyc'], queryFn: () => call('getKycStatus', {}) });
  const [nin, setNin] = useState('');
  const [ninPhone, setNinPhone] = useState('');
  const [bankCode, setBankCode] = useState('');
  const [accountNumber, setAccountNumber] = useState('');
  const [documentType, setDocumentType] = useState<DocumentType>('passport');
  const [file, setFile] = useState<File | null>(null);
  const [fileError, setFileError] = useState<string | undefined>();
  const done = () => queries.invalidateQueries({ queryKey: ['kyc'] });
  const tier2 = useMutation({
    mutationFn: () => call('submitKycTier2', { nin, phone: ninPhone }),
    onSuccess: done,
  });
  const tier3 = useMutation({
    mutationFn: async () =>
      call('submitKycTier3', {
        bankCode,
        accountNumber,
        documentType,
        documentBase64: await readAsBase64(file!),
        documentMimeType: file!.type as Mime,
      }),
    onSuccess: done,
  });
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
  const shownError = (status.error ??
    start.error ??
    tier1Error ??
    tier2.error ??
    tier3.error) as CallError | null;
  const tier1Refused =
    shownError !== null &&
    shownError === tier1Error &&
    (shownError.code === 'VALIDATION_ERROR' || shownError.code === 'CONFLICT');
  const tier = status.data?.tier ?? 0;
  const next = status.data?.tiers.find((t) => t.tier === tier + 1);

  return (
    <Screen title="Verify your identity">
      {status.isPending ? <Waiting label="Loading your verification" /> : null}
      <ErrorNote error={shownError} message={tier1Refused ? refusedCheckWords : undefined} />
      <div role="status" aria-live="polite" data-testid="liveness-ignored">
        {ignored ? (
          <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
            We could not match this face check to one started in this window, so it was not used. Start the
            face check again.
          </p>
        ) : null}
      </div>
      {status.data ? (
        <ul aria-label="Your tiers" className="flex flex-col gap-1">
          {status.data.tiers.map((t) => (
            <li key={t.tier} data-testid={`tier-${t.tier}`}>
              Tier {t.tier}: {statusWords[t.status]}
              {t.reason ? ` (${t.reason})` : ''}
            </li>
          ))}
        </ul>
      ) : null}
      {next?.status === 'pending' ? (
        <p>We are checking tier {next.tier}. We will tell you when it is done.</p>
      ) : null}
      {tier === 0 && next?.status !== 'pending' ? (
        <div className="flex flex-col gap-2">
          <h2 className="text-lg font-semibold">Tier 1: a face check</h2>
          <p>
            Our verification partner checks that you are a real person, with your camera. It takes a minute.
          </p>
          <Button busy={tier1.isPending || start.isPending || leaving} onClick={() => start.mutate()}>
            Start face check
          </Button>
        </div>
      ) : null}
      {tier === 1 && next?.status !== 'pending' ? (
        <form
          className="flex flex-col gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            tier2.mutate();
          }}
        >
          <h2 className="text-lg font-semibold">Tier 2: your NIN</h2>
          <Field
            label="NIN"
            value={nin}
            onChange={setNin}
            inputMode="numeric"
            maxLength={11}
            hint="11 digits"
          />
          <Field label="Phone number on your NIN" value={ninPhone} onChange={setNinPhone} inputMode="tel" />
          <Button type="submit" busy={tier2.isPending} disabled={!/^\d{11}$/.test(nin) || ninPhone === ''}>
            Submit NIN
          </Button>
        </form>
      ) : null}
      {tier === 2 && next?.status !== 'pending' ? (
        <form
          className="flex flex-col gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            tier3.mutate();
          }}
        >
          <h2 className="text-lg font-semibold">Tier 3: bank account and ID</h2>
          <Field
            label="Bank code"
            value={bankCode}
            onChange={setBankCode}
            inputMode="numeric"
            hint="Like 058"
          />
          <Field
            label="Account number"
            value={accountNumber}
            onChange={setAccountNumber}
            inputMode="numeric"
            maxLength={10}
          />
          <label className="flex flex-col gap-1">
            <span className="font-medium">Document</span>
            <select
              className="rounded-lg border border-gray-400 px-3 py-2"
              value={documentType}
              onChange={(event) => setDocumentType(event.target.value as DocumentType)}
            >
              {documentTypes.map((d) => (
                <option key={d.value} value={d.value}>
                  {d.label}
                </option>
              ))}
            </select>
          </label>
          <label className="flex flex-col gap-1">
            <span className="font-medium">Photo or PDF of the document</span>
            <input
              type="file"
              accept="image/jpeg,image/png,application/pdf"
              aria-describedby={fileError ? 'document-error' : undefined}
              onChange={(event) => {
                const chosen = event.target.files?.[0] ?? null;
                setFileError(
                  chosen !== null && chosen.size > documentBytesMax
                    ? 'The file is larger than 5 MB'
                    : undefined,
                );
                setFile(chosen);
              }}
            />
          </label>
          {fileError ? (
            <p id="document-error" className="text-sm text-red-800">
              {fileError}
            </p>
          ) : null}
          <Button
            type="submit"
            busy={tier3.isPending}
            disabled={
              file === null || fileError !== undefined || bankCode === '' || !/^\d{10}$/.test(accountNumber)
            }
          >
            Submit for review
          </Button>
        </form>
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
