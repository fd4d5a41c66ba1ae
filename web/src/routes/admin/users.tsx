import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useState } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { useMe } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { kindLabels } from '../../components/transaction-row.tsx';
import { Button, ErrorNote, Field, LongField, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber, shownPhone } from '../../format.ts';

// Admin: one person's account (API.md section 17.4). Found by phone (as people write it) or by user
// id (adminGetUser): who they are, whether the account is frozen (since when, by whom and why: the
// reason is the operators', never shown to the person), the balances and what last moved the
// wallet. Then: freeze it (they can still sign in, see everything and receive money, but nothing
// leaves the wallet), unfreeze it, each with a reason the audit log keeps, or end every session
// they have (a lost phone, a stolen token). Another admin's lost authenticator is reset here too.
// Ending every session of everyone is the incident switch, behind its own confirmation.

type Person = Output<'adminGetUser'>;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const reasonLengthMax = 500;
/** The movements shown at first: the look-up gives the latest 50. */
const movementsShown = 10;

/** What the admin typed, as adminGetUser takes it: an id, or a phone the service reads as sign-in does. */
const lookupOf = (text: string) => {
  const typed = text.trim();
  if (typed === '') return null;
  return uuidPattern.test(typed) ? { userId: typed } : { phone: typed.replace(/[\s-]/g, '') };
};

const personKey = (lookup: ReturnType<typeof lookupOf>) => ['admin-user', lookup] as const;

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="contents">
      <dt className="text-gray-700">{label}</dt>
      <dd className="font-medium wrap-anywhere">{children}</dd>
    </div>
  );
}

function PersonCard({ person }: { person: Person }) {
  const name = [person.firstName, person.lastName].filter(Boolean).join(' ');
  const [all, setAll] = useState(false);
  const movements = all ? person.movements : person.movements.slice(0, movementsShown);
  return (
    <section
      aria-labelledby="person-title"
      className="flex flex-col gap-3 rounded-xl border border-gray-300 p-3"
      data-testid="person"
    >
      <h2 id="person-title" className="text-xl font-semibold">
        {name === '' ? shownPhone(person.phone) : name}
      </h2>
      <div
        role="status"
        data-testid="freeze-state"
        className={`rounded-lg p-3 ${person.frozen ? 'bg-red-100 text-red-900' : 'bg-green-100 text-green-900'}`}
      >
        {person.frozen ? (
          <>
            <p className="font-semibold">
              Frozen{person.frozenAt ? ` since ${formatDateTime(person.frozenAt)}` : ''}
            </p>
            {person.frozenReason ? <p>Why: {person.frozenReason}</p> : null}
            {person.frozenBy ? <p className="text-sm wrap-anywhere">By admin {person.frozenBy}</p> : null}
          </>
        ) : (
          <p className="font-semibold">Not frozen</p>
        )}
      </div>
      <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
        <Fact label="Phone">{shownPhone(person.phone)}</Fact>
        <Fact label="User id">{person.id}</Fact>
        {person.email ? <Fact label="Email">{person.email}</Fact> : null}
        <Fact label="KYC tier">{person.kycTier}</Fact>
        <Fact label="Roles">{person.roles.join(', ')}</Fact>
        <Fact label="Since">{formatDateTime(person.createdAt)}</Fact>
        <Fact label="Balance">{formatNairaNumber(person.wallet.balance)}</Fact>
        <Fact label="Locked savings">{formatNairaNumber(person.wallet.lockedSavings)}</Fact>
      </dl>
      <h3 className="font-semibold">
        Latest movements ({movements.length} of {person.movementsTotal})
      </h3>
      {person.movements.length === 0 ? <p>Nothing has moved their wallet yet.</p> : null}
      <ul aria-label="Latest movements" className="flex flex-col divide-y divide-gray-200 text-sm">
        {movements.map((m) => (
          <li key={m.id} className="flex justify-between gap-2 py-2">
            <span className="flex min-w-0 flex-col">
              <span className="font-medium">{kindLabels[m.kind] ?? m.kind}</span>
              <span className="wrap-anywhere text-gray-700">{m.description}</span>
              <span className="text-gray-700">{formatDateTime(m.createdAt)}</span>
            </span>
            <span className="whitespace-nowrap font-semibold">
              {m.direction === 'credit' ? '+' : '−'}
              {formatNairaNumber(m.amount)}
            </span>
          </li>
        ))}
      </ul>
      {!all && person.movements.length > movementsShown ? (
        <Button variant="secondary" onClick={() => setAll(true)}>
          Show the latest {person.movements.length}
        </Button>
      ) : null}
    </section>
  );
}

/** Freeze or unfreeze, and end the person's sessions: on the account found. */
function Actions({ person, onChanged }: { person: Person; onChanged: () => void }) {
  const [reason, setReason] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const why = reason.trim();
  const freeze = useMutation<'freeze' | 'unfreeze', CallError, 'freeze' | 'unfreeze'>({
    mutationFn: async (action) => {
      if (action === 'freeze') await call('adminFreezeUser', { userId: person.id, reason: why });
      else await call('adminUnfreezeUser', { userId: person.id, reason: why });
      return action;
    },
    onMutate: () => setDone(null),
    onSuccess: (action) => {
      setDone(
        action === 'freeze'
          ? 'Frozen: they can no longer pay or send money. Money can still come in.'
          : 'Unfrozen: they can pay and send money again.',
      );
      setReason('');
    },
    onSettled: onChanged,
  });
  const revoke = useMutation<number, CallError>({
    mutationFn: async () => (await call('adminRevokeSessions', { userId: person.id })).revoked,
    onMutate: () => setDone(null),
    onSuccess: (revoked) =>
      setDone(
        `Signed out: ${revoked} ${revoked === 1 ? 'session' : 'sessions'} ended. They must sign in again.`,
      ),
  });
  const error = freeze.error ?? revoke.error;
  const action = person.frozen ? 'unfreeze' : 'freeze';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (why !== '') freeze.mutate(action);
  };

  return (
    <div className="flex flex-col gap-4">
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <LongField
          label="Reason"
          value={reason}
          onChange={setReason}
          maxLength={reasonLengthMax}
          hint={`Why you ${action}: kept in the audit log, never shown to the person.`}
        />
        <ErrorNote
          error={error}
          message={
            error?.code === 'CONFLICT'
              ? 'Another admin changed this account meanwhile: it is shown as it is now.'
              : undefined
          }
        />
        <Button type="submit" busy={freeze.isPending} disabled={why === ''}>
          {person.frozen ? 'Unfreeze' : 'Freeze'}
        </Button>
      </form>
      <Button variant="secondary" busy={revoke.isPending} onClick={() => revoke.mutate()}>
        Sign out all their sessions
      </Button>
      <div role="status" aria-live="polite">
        {done ? <p className="rounded-xl bg-green-100 p-3 text-green-900">{done}</p> : null}
      </div>
    </div>
  );
}

/**
 * Another admin's lost authenticator (adminResetTotp, four eyes): their enrolment removed and their
 * sessions ended, so they sign in again and enrol anew. Not offered for one's own account.
 */
function ResetAuthenticator({ person }: { person: Person }) {
  const [reason, setReason] = useState('');
  const why = reason.trim();
  const reset = useMutation<Output<'adminResetTotp'>, CallError>({
    mutationFn: () => call('adminResetTotp', { adminId: person.id, reason: why }),
    onSuccess: () => setReason(''),
  });
  const error = reset.error;
  return (
    <details className="rounded-xl border border-gray-300 p-3">
      <summary className="cursor-pointer font-semibold">Reset their authenticator</summary>
      <form
        className="mt-3 flex flex-col gap-3"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (why !== '') reset.mutate();
        }}
      >
        <p>
          For an admin who lost the phone with their authenticator: it is removed and every session of theirs
          ends. They sign in again and set up a new one. Only do it once you are sure it is them asking.
        </p>
        <LongField
          label="How you confirmed it is them"
          value={reason}
          onChange={setReason}
          maxLength={reasonLengthMax}
          hint="Kept in the audit log."
        />
        <ErrorNote
          error={error}
          message={
            error?.code === 'NOT_FOUND'
              ? 'They have no authenticator set up: there is nothing to reset.'
              : error?.code === 'FORBIDDEN'
                ? 'Another admin must reset yours.'
                : undefined
          }
        />
        <Button type="submit" variant="secondary" busy={reset.isPending} disabled={why === ''}>
          Reset the authenticator
        </Button>
        <div role="status" aria-live="polite">
          {reset.data ? (
            <p className="rounded-xl bg-green-100 p-3 text-green-900">
              Reset: {reset.data.revoked} {reset.data.revoked === 1 ? 'session' : 'sessions'} ended. They set
              up a new authenticator when they next open an admin screen.
            </p>
          ) : null}
        </div>
      </form>
    </details>
  );
}

function Users() {
  const me = useMe();
  const queries = useQueryClient();
  const [typed, setTyped] = useState('');
  const [lookup, setLookup] = useState<ReturnType<typeof lookupOf>>(null);
  const person = useQuery({
    queryKey: personKey(lookup),
    queryFn: () => call('adminGetUser', lookup!),
    enabled: lookup !== null,
    retry: false,
  });
  const find = (event: FormEvent) => {
    event.preventDefault();
    setLookup(lookupOf(typed));
  };
  const error = person.error as CallError | null;

  return (
    <Screen title="Users">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <form className="flex flex-col gap-4" onSubmit={find} noValidate>
        <Field
          label="Phone or user id"
          value={typed}
          onChange={setTyped}
          autoComplete="off"
          hint="The phone as the person writes it (0803…), or the id on an alert, a dispute or a KYC review."
        />
        <Button
          type="submit"
          busy={person.isFetching && person.data === undefined}
          disabled={typed.trim() === ''}
        >
          Find
        </Button>
      </form>
      {person.isFetching && person.data === undefined ? <Waiting label="Looking for them" /> : null}
      <ErrorNote
        error={error}
        message={
          error?.code === 'NOT_FOUND'
            ? 'Nobody has this phone or id.'
            : error?.code === 'VALIDATION_ERROR'
              ? 'That is neither a phone number (0803…) nor a user id.'
              : undefined
        }
      />
      {person.data ? (
        <>
          <PersonCard person={person.data} />
          <Actions
            key={person.data.id}
            person={person.data}
            onChanged={() => void queries.invalidateQueries({ queryKey: personKey(lookup) })}
          />
          {person.data.roles.includes('admin') && person.data.id !== me.data?.id ? (
            <ResetAuthenticator key={`reset-${person.data.id}`} person={person.data} />
          ) : null}
        </>
      ) : null}
      <SignOutEveryone />
    </Screen>
  );
}

/** Ends the sessions of everyone (an incident): only once the admin ticks that they mean it. */
function SignOutEveryone() {
  const [sure, setSure] = useState(false);
  const revokeAll = useMutation<number, CallError>({
    mutationFn: async () => (await call('adminRevokeSessions', { all: true })).revoked,
    onSuccess: () => setSure(false),
  });
  return (
    <details className="rounded-xl border border-red-300 p-3">
      <summary className="cursor-pointer font-semibold">Sign out everyone</summary>
      <div className="mt-3 flex flex-col gap-3">
        <p>
          Ends every session of every person at once, for a leak or a stolen key. Everyone must sign in again,
          you too on your other devices; this session of yours stays.
        </p>
        <label className="flex items-center gap-2">
          <input type="checkbox" checked={sure} onChange={(event) => setSure(event.target.checked)} />I mean
          to sign everyone out
        </label>
        <ErrorNote error={revokeAll.error} />
        <Button
          variant="secondary"
          busy={revokeAll.isPending}
          disabled={!sure}
          onClick={() => revokeAll.mutate()}
        >
          Sign out everyone now
        </Button>
        <div role="status" aria-live="polite">
          {revokeAll.data !== undefined ? (
            <p className="rounded-xl bg-green-100 p-3 text-green-900">
              {revokeAll.data} {revokeAll.data === 1 ? 'session' : 'sessions'} ended.
            </p>
          ) : null}
        </div>
      </div>
    </details>
  );
}

export const Route = createFileRoute('/admin/users')({ beforeLoad: requireSignIn, component: Users });
