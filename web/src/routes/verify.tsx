import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
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
  const navigate = useNavigate();
  const { livenessToken, state } = Route.useSearch();
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
  // (`?livenessToken=…&state=…`). A token that comes back with any other state (a link someone
  // crafted to attach their face check to this account) is never submitted.
  const [ignored, setIgnored] = useState(false);
  const start = useMutation({
    mutationFn: () => call('getKycLivenessUrl', {}),
    onSuccess: (check) => {
      sessionStorage.setItem(livenessStateKey, check.state);
      const page = new URL(check.url, window.location.origin);
      page.searchParams.set('return', '/verify');
      window.location.assign(page.toString());
    },
  });
  const tier1 = useMutation({
    mutationFn: (check: { livenessToken: string; state: string }) => call('submitKycTier1', check),
    onSettled: done,
  });
  const submitted = useRef(false);
  useEffect(() => {
    if (livenessToken === undefined || submitted.current) return;
    submitted.current = true;
    const started = sessionStorage.getItem(livenessStateKey);
    // The token and the state leave the address bar and the history at once, used or not.
    void navigate({ to: '/verify', search: {}, replace: true });
    if (state === undefined || started === null || state !== started) {
      setIgnored(true);
      return;
    }
    sessionStorage.removeItem(livenessStateKey);
    tier1.mutate({ livenessToken, state });
  }, [livenessToken, state, tier1, navigate]);
  const tier = status.data?.tier ?? 0;
  const next = status.data?.tiers.find((t) => t.tier === tier + 1);

  return (
    <Screen title="Verify your identity">
      {status.isPending ? <Waiting label="Loading your verification" /> : null}
      <ErrorNote
        error={(status.error ?? start.error ?? tier1.error ?? tier2.error ?? tier3.error) as CallError | null}
      />
      {ignored ? (
        <p role="status" data-testid="liveness-ignored">
          A face check result came back that this device did not start, so it was not used. Start the face
          check here if you want to verify.
        </p>
      ) : null}
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
          <Button busy={tier1.isPending || start.isPending} onClick={() => start.mutate()}>
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
  beforeLoad: requireSignIn,
  component: Kyc,
});
