import { createFileRoute, Link } from '@tanstack/react-router';
import { BadgeCheck } from 'lucide-react';
import type { CallError, Output } from '../api/client.ts';
import { useMe } from '../api/queries.ts';
import { requireSignIn } from '../auth-guard.ts';
import { NamesForm } from '../components/kyc-names-form.tsx';
import { ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { shownPhone } from '../format.ts';

// The person's profile (API.md section 4): the name, which Tier 2 checks against the NIN and then
// fixes for good (others see it when money moves), the phone they sign in with, and the email
// address, whose verification lives in Settings.

type Me = Output<'getMe'>;

function VerifiedName({ me }: { me: Me }) {
  return (
    <div className="flex flex-col gap-2">
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1">
        <dt>First name</dt>
        <dd className="font-semibold">{me.firstName}</dd>
        <dt>Last name</dt>
        <dd className="font-semibold">{me.lastName}</dd>
      </dl>
      <p className="flex items-center gap-1 self-start rounded-full bg-green-100 px-2 py-0.5 text-sm text-green-900">
        <BadgeCheck aria-hidden="true" size={16} />
        Verified
      </p>
      <p className="text-sm text-gray-700">
        Your name was checked against your NIN, so it can no longer be changed: it is the name people see when
        you send them money.
      </p>
    </div>
  );
}

function Profile() {
  const me = useMe();
  return (
    <Screen title="Your profile">
      {me.isPending ? <Waiting label="Loading your profile" /> : null}
      <ErrorNote error={me.error as CallError | null} />
      {me.data ? (
        <>
          <section aria-labelledby="name-title" className="flex flex-col gap-3">
            <h2 id="name-title" className="text-lg font-semibold">
              Name
            </h2>
            {me.data.nameVerified ? (
              <VerifiedName me={me.data} />
            ) : (
              <NamesForm me={me.data} submitLabel="Save name" />
            )}
          </section>
          <section aria-labelledby="phone-title" className="flex flex-col gap-1">
            <h2 id="phone-title" className="text-lg font-semibold">
              Phone number
            </h2>
            <p className="font-semibold" data-testid="profile-phone">
              {shownPhone(me.data.phone)}
            </p>
            <p className="text-sm text-gray-700">
              You sign in with this number. Your sign-in codes come to it.
            </p>
          </section>
          <section aria-labelledby="profile-email-title" className="flex flex-col gap-1">
            <h2 id="profile-email-title" className="text-lg font-semibold">
              Email
            </h2>
            <p data-testid="profile-email">
              {me.data.email === null
                ? 'No email address yet.'
                : `${me.data.email} (${me.data.emailVerified ? 'verified' : 'not verified yet'})`}
            </p>
            <Link to="/settings" hash="email-title" className="self-start text-brand underline">
              {me.data.email === null
                ? 'Add an email in Settings'
                : me.data.emailVerified
                  ? 'Change it in Settings'
                  : 'Verify it in Settings'}
            </Link>
          </section>
          <section aria-labelledby="tier-title" className="flex flex-col gap-1">
            <h2 id="tier-title" className="text-lg font-semibold">
              Verification
            </h2>
            <p>{me.data.kycTier === 0 ? 'Not verified yet.' : `Tier ${me.data.kycTier} verified.`}</p>
            <Link to="/verify" className="self-start text-brand underline">
              {me.data.kycTier >= 3 ? 'See your verification' : 'Verify your identity'}
            </Link>
          </section>
        </>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/profile')({ beforeLoad: requireSignIn, component: Profile });
