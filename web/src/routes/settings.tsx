import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import {
  BadgeCheck,
  BellRing,
  Download,
  type LucideIcon,
  Megaphone,
  PiggyBank,
  ShieldCheck,
  ShoppingBag,
  Wallet,
} from 'lucide-react';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../api/client.ts';
import { useMe } from '../api/queries.ts';
import { session } from '../api/session.ts';
import { requireSignIn } from '../auth-guard.ts';
import { AccountClosure } from '../components/account-closure.tsx';
import { AccountLimits } from '../components/account-limits.tsx';
import { DataExport } from '../components/data-export.tsx';
import { OnOffSwitch } from '../components/on-off-switch.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../components/ui.tsx';
import { UssdSwitch } from '../components/ussd-switch.tsx';
import {
  currentPushState,
  disablePush,
  enablePush,
  forgetPushOnThisDevice,
  type PushState,
  signOutStepMs,
} from '../push.ts';

// Settings (API.md section 10): the account's limits and the person's own (section 17.2), the USSD
// channel's switch (section 17.6), the email address and its 6-digit code, which messages come by
// email and by push (security messages cannot be turned off, so they are not offered), push
// notifications on this device, a copy of their data and
// closing the account (section 17.3), and signing out (this device's push subscription is deleted
// first, then the session ends at the service too).

type Me = Output<'getMe'>;
type Switches = Output<'getNotificationSettings'>;
type Channel = keyof Switches;
/** The kinds a person may switch: the security kinds are not among them. */
type Kind = keyof NonNullable<Input<'updateNotificationSettings'>['email']>;

/** The switchable kinds, grouped as a person thinks of them. */
const groups: ReadonlyArray<{
  title: string;
  Icon: LucideIcon;
  adminOnly?: boolean;
  kinds: ReadonlyArray<{ kind: Kind; label: string }>;
}> = [
  {
    title: 'Money',
    Icon: Wallet,
    kinds: [
      { kind: 'topup_credited', label: 'Wallet funded' },
      // A bank deposit, under the contract's kind (decision 0038); the person made a bank transfer.
      { kind: 'transfer_credited', label: 'Bank transfer received' },
      { kind: 'wallet_transfer_received', label: 'Money received from someone' },
      { kind: 'wallet_adjusted', label: 'Wallet corrected by support' },
      { kind: 'balance_held', label: 'Money held over your maximum balance' },
      { kind: 'held_released', label: 'Held money moved into your balance' },
    ],
  },
  {
    title: 'Purchases',
    Icon: ShoppingBag,
    kinds: [
      { kind: 'purchase_succeeded', label: 'Purchase delivered' },
      { kind: 'purchase_failed', label: 'Purchase failed and refunded' },
      { kind: 'schedule_skipped', label: 'Scheduled purchase skipped' },
      { kind: 'schedule_paused', label: 'Scheduled purchase paused' },
      { kind: 'dispute_resolved', label: 'A problem you reported was resolved' },
    ],
  },
  {
    title: 'Savings & rewards',
    Icon: PiggyBank,
    kinds: [
      { kind: 'lock_created', label: 'Savings locked' },
      { kind: 'lock_matured', label: 'Savings matured' },
      { kind: 'lock_broken', label: 'Savings lock broken' },
      { kind: 'checkin_claimed', label: 'Daily check-in claimed' },
      { kind: 'milestone_reached', label: 'Savings milestone reached' },
      { kind: 'referral_qualified', label: 'A friend you invited qualified' },
    ],
  },
  {
    title: 'Verification',
    Icon: BadgeCheck,
    kinds: [
      { kind: 'kyc_approved', label: 'Verification approved' },
      { kind: 'kyc_rejected', label: 'Verification not approved' },
    ],
  },
  {
    title: 'Your data',
    Icon: Download,
    kinds: [{ kind: 'data_export_ready', label: 'A copy of your data is ready' }],
  },
  { title: 'News', Icon: Megaphone, kinds: [{ kind: 'broadcast', label: 'News and polls' }] },
  {
    title: 'Administration',
    Icon: ShieldCheck,
    adminOnly: true,
    kinds: [{ kind: 'ops_alert', label: 'Operations alerts' }],
  },
];

const channels: ReadonlyArray<{ channel: Channel; label: string }> = [
  { channel: 'email', label: 'Email' },
  { channel: 'push', label: 'Push' },
];

/** The email address, the code sent to it and its verification. */
function EmailSection({ me }: { me: Me }) {
  const queries = useQueryClient();
  const [address, setAddress] = useState('');
  const [code, setCode] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const pending = me.email !== null && !me.emailVerified;
  const waitingFor = sentTo ?? (pending ? me.email : null);

  const sendCode = useMutation({
    mutationFn: (email: string) => call('updateProfile', { email }),
    onSuccess: (user) => {
      queries.setQueryData(['me'], user);
      setCode('');
      setDone(null);
      setSentTo(user.emailVerified ? null : user.email);
      if (user.emailVerified) setDone(`${user.email} is already verified.`);
      setAddress('');
    },
  });
  const verify = useMutation({
    mutationFn: (entered: string) => call('verifyEmail', { code: entered }),
    onSuccess: (user) => {
      queries.setQueryData(['me'], user);
      setSentTo(null);
      setCode('');
      setDone(`${user.email} is verified. Emails will come to it.`);
    },
  });
  const attemptsLeft = (verify.error as CallError | null)?.details?.attemptsLeft;
  const codeOk = /^\d{6}$/.test(code);
  const addressOk = /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address.trim());

  function submitAddress(event: FormEvent) {
    event.preventDefault();
    if (addressOk) sendCode.mutate(address.trim());
  }
  function submitCode(event: FormEvent) {
    event.preventDefault();
    if (codeOk) verify.mutate(code);
  }

  return (
    <section aria-labelledby="email-title" className="flex flex-col gap-3">
      <h2 id="email-title" className="text-lg font-semibold">
        Email
      </h2>
      <p data-testid="email-status">
        {me.email === null
          ? 'No email address yet. Add one to get receipts and alerts by email.'
          : me.emailVerified
            ? `Your email is ${me.email} (verified).`
            : `Your email is ${me.email}: not verified yet, so nothing is sent to it.`}
      </p>
      <form className="flex flex-col gap-3" onSubmit={submitAddress} noValidate>
        <Field
          label={me.email === null ? 'Email address' : 'New email address'}
          value={address}
          onChange={setAddress}
          type="email"
          inputMode="email"
          autoComplete="email"
          maxLength={254}
          hint="We email it a 6-digit code to check it is yours."
          error={address.trim() !== '' && !addressOk ? 'Type an address such as ada@example.com' : undefined}
        />
        <ErrorNote error={sendCode.error as CallError | null} />
        <Button type="submit" variant="secondary" busy={sendCode.isPending} disabled={!addressOk}>
          Send the code
        </Button>
      </form>
      {waitingFor !== null ? (
        <form className="flex flex-col gap-3" onSubmit={submitCode} noValidate>
          <p>
            {sentTo !== null
              ? `We sent a 6-digit code to ${sentTo}. It works for 15 minutes.`
              : `Type the 6-digit code we sent to ${waitingFor}.`}
          </p>
          <Field
            label="Code from the email"
            value={code}
            onChange={(value) => setCode(value.replace(/\D/g, ''))}
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={6}
            error={
              typeof attemptsLeft === 'number'
                ? attemptsLeft > 0
                  ? `That code is not right or has expired. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left.`
                  : 'That code can no longer be used. Send a new one.'
                : undefined
            }
          />
          <ErrorNote error={verify.error as CallError | null} />
          <div className="flex flex-wrap gap-2">
            <Button type="submit" busy={verify.isPending} disabled={!codeOk}>
              Verify
            </Button>
            <Button
              variant="secondary"
              busy={sendCode.isPending}
              onClick={() => {
                verify.reset();
                sendCode.mutate(waitingFor);
              }}
            >
              Send a new code
            </Button>
          </div>
        </form>
      ) : null}
      <p role="status" aria-live="polite" className="text-green-900">
        {done}
      </p>
    </section>
  );
}

/** Which messages come by email and by push, one switch each. */
function NotificationSwitches({ me }: { me: Me }) {
  const queries = useQueryClient();
  const groupLabel = useId();
  const settings = useQuery({
    queryKey: ['notification-settings'],
    queryFn: () => call('getNotificationSettings', {}),
  });
  // Each switch shows its new state at once; the changes reach the service one after the other (one
  // mutation scope), so two quick taps never overwrite each other there, and the last answer is shown.
  const change = useMutation({
    mutationKey: ['notification-settings'],
    scope: { id: 'notification-settings' },
    mutationFn: (input: Input<'updateNotificationSettings'>) => call('updateNotificationSettings', input),
    onMutate: (input) => {
      queries.setQueryData<Switches>(['notification-settings'], (was) =>
        was === undefined
          ? was
          : {
              email: { ...was.email, ...input.email },
              push: { ...was.push, ...input.push },
            },
      );
    },
    onSuccess: (next) => {
      // A later change still on its way keeps its own switch as shown.
      if (queries.isMutating({ mutationKey: ['notification-settings'] }) <= 1)
        queries.setQueryData(['notification-settings'], next);
    },
    onError: () => queries.invalidateQueries({ queryKey: ['notification-settings'] }),
  });
  const shown = groups.filter((g) => !g.adminOnly || me.roles.includes('admin'));
  const [announced, setAnnounced] = useState<string | null>(null);

  function flip(kind: Kind, label: string, channel: Channel, on: boolean) {
    setAnnounced(null);
    const input: Input<'updateNotificationSettings'> =
      channel === 'email' ? { email: { [kind]: on } } : { push: { [kind]: on } };
    change.mutate(input, {
      onSuccess: () =>
        setAnnounced(`${label} by ${channel === 'email' ? 'email' : 'push'}: ${on ? 'on' : 'off'}.`),
    });
  }

  return (
    <section aria-labelledby={groupLabel} className="flex flex-col gap-3">
      <h2 id={groupLabel} className="text-lg font-semibold">
        What we tell you
      </h2>
      <p className="text-sm text-gray-700">
        Everything always shows in your inbox. Choose what also comes by email (only to a verified address)
        and by push to your phones. Security messages (a sign-in on a new device, a PIN change) are always
        emailed and cannot be turned off.
      </p>
      {settings.isPending ? <Waiting label="Loading your choices" /> : null}
      <ErrorNote error={(settings.error ?? change.error) as CallError | null} />
      {settings.data
        ? shown.map(({ title, Icon, kinds }) => (
            <div key={title} className="flex flex-col gap-2">
              <h3 className="flex items-center gap-2 font-semibold">
                <Icon aria-hidden="true" size={18} className="text-brand" />
                {title}
              </h3>
              <ul className="flex flex-col gap-2">
                {kinds.map(({ kind, label }) => (
                  <li key={kind}>
                    <fieldset className="rounded-xl border border-gray-300 px-3 py-2">
                      <legend className="sr-only">{label}</legend>
                      <div className="grid grid-cols-[1fr_auto_auto] items-center gap-3">
                        <span aria-hidden="true" className="font-medium">
                          {label}
                        </span>
                        {channels.map(({ channel, label: channelLabel }) => (
                          <label key={channel} className="flex items-center gap-1">
                            <input
                              type="checkbox"
                              className="h-6 w-6"
                              checked={settings.data[channel][kind]}
                              onChange={(event) => flip(kind, label, channel, event.target.checked)}
                            />
                            {channelLabel}
                          </label>
                        ))}
                      </div>
                    </fieldset>
                  </li>
                ))}
              </ul>
            </div>
          ))
        : null}
      <p role="status" aria-live="polite" className="text-sm">
        {announced}
      </p>
    </section>
  );
}

const pushWords: Record<PushState, string> = {
  on: 'On: this phone shows a notification for each kind switched on for push below.',
  off: 'Off: nothing pops up on this phone. Your inbox still has everything.',
  blocked:
    'Blocked in the browser: allow notifications for this site in your browser’s site settings, then come back here.',
  unsupported: 'Not supported: this browser cannot show notifications.',
};

/** Push on this phone as one switch, with its state in words (and why it cannot change, when it cannot). */
function PushSwitch() {
  const labelId = useId();
  const stateId = useId();
  const [state, setState] = useState<PushState | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const [unreachable, setUnreachable] = useState(false);
  useEffect(() => {
    let shown = true;
    void currentPushState().then((now) => shown && setState(now));
    return () => {
      shown = false;
    };
  }, []);
  const on = state === 'on';

  async function flip() {
    setBusy(true);
    setError(null);
    setUnreachable(false);
    try {
      const next = on ? await disablePush() : await enablePush();
      setUnreachable(next === 'unreachable');
      setState(next === 'unreachable' ? await currentPushState() : next);
    } catch (caught) {
      setError(caught as CallError);
      setState(await currentPushState());
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby={labelId} className="flex flex-col gap-2">
      <div className="flex items-center justify-between gap-3">
        <h2 id={labelId} className="flex items-center gap-2 text-lg font-semibold">
          <BellRing aria-hidden="true" size={20} className="text-brand" />
          Push on this phone
        </h2>
        <OnOffSwitch
          on={on}
          labelledBy={labelId}
          describedBy={stateId}
          busy={busy}
          disabled={busy || state === null || state === 'blocked' || state === 'unsupported'}
          onClick={() => void flip()}
        />
      </div>
      <p id={stateId} role="status" aria-live="polite" className="text-sm" data-testid="push-state">
        {state === null ? 'Checking this phone…' : pushWords[state]}
      </p>
      {unreachable ? (
        <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
          This browser could not reach its push service, so push is still off. Try again later.
        </p>
      ) : null}
      <ErrorNote error={error} />
    </section>
  );
}

function Settings() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const me = useMe();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Screen title="Settings">
      {me.isPending ? <Waiting label="Loading your settings" /> : null}
      <ErrorNote error={me.error as CallError | null} />
      <Link to="/profile" className="rounded-xl border border-gray-300 p-3 font-semibold text-brand">
        Your profile: name, phone and email
      </Link>
      <Link to="/pin/change" className="rounded-xl border border-gray-300 p-3 font-semibold text-brand">
        Change PIN
      </Link>
      <AccountLimits />
      {me.data ? <UssdSwitch me={me.data} /> : null}
      {me.data ? <EmailSection me={me.data} /> : null}
      <PushSwitch />
      {me.data ? <NotificationSwitches me={me.data} /> : null}
      <DataExport />
      <AccountClosure />
      <ErrorNote error={error} />
      <Button
        variant="secondary"
        busy={busy}
        onClick={() =>
          act(async () => {
            // While the session is still valid: this phone stops getting this person's pushes.
            await forgetPushOnThisDevice();
            await call('signOut', {}, { signal: AbortSignal.timeout(signOutStepMs) }).catch(() => undefined);
            session.clear();
            queries.clear();
            localStorage.clear();
            await navigate({ to: '/sign-in', search: {} });
          })
        }
      >
        Sign out
      </Button>
    </Screen>
  );
}

export const Route = createFileRoute('/settings')({ beforeLoad: requireSignIn, component: Settings });
