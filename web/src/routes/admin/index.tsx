import { createFileRoute, Link } from '@tanstack/react-router';
import type { CallError } from '../../api/client.ts';
import { useMe } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { ErrorNote, Screen, Waiting } from '../../components/ui.tsx';

// Admin: the operations screens (API.md sections 11 and 17.4), one link each. Only for people with the admin
// role; the service refuses everyone else whatever this screen shows.

const screens = [
  { to: '/admin/alerts', label: 'Alerts', note: 'Problems a person must look at' },
  { to: '/admin/kyc', label: 'KYC reviews', note: 'Identity documents waiting for a decision' },
  { to: '/admin/disputes', label: 'Disputes', note: 'Problems people reported: refund or decline' },
  { to: '/admin/broadcasts', label: 'Broadcasts', note: 'Send news to everyone, with a poll if you like' },
  { to: '/admin/markups', label: 'Markups', note: 'What is added to the wholesale price of each service' },
  {
    to: '/admin/ledger',
    label: 'Reconcile and ledger check',
    note: 'Settle what is pending; check the books',
  },
  {
    to: '/admin/reconciliation',
    label: 'Reconciliation',
    note: "Compare the providers' own records with ours; resolve what differs",
  },
  { to: '/admin/users', label: 'Users', note: 'Freeze or unfreeze an account; sign its sessions out' },
  {
    to: '/admin/adjustments',
    label: 'Adjustments',
    note: 'Correct a wallet: one admin proposes, another approves',
  },
  { to: '/admin/pauses', label: 'Pauses', note: 'Pause a service or a provider; resume it' },
  { to: '/admin/audit', label: 'Audit log', note: 'Every admin operation, allowed or refused' },
] as const;

function AdminHome() {
  const me = useMe();
  const isAdmin = me.data?.roles.includes('admin') ?? false;
  return (
    <Screen title="Admin">
      {me.isPending ? <Waiting label="Checking your access" /> : null}
      <ErrorNote error={me.error as CallError | null} />
      {me.data && !isAdmin ? <p>These screens are for administrators only.</p> : null}
      {isAdmin ? (
        <nav aria-label="Admin screens">
          <ul className="flex flex-col gap-3">
            {screens.map((s) => (
              <li key={s.to}>
                <Link to={s.to} className="block rounded-xl border border-brand p-4 text-brand">
                  <span className="block text-lg font-semibold">{s.label}</span>
                  <span className="text-sm text-gray-700">{s.note}</span>
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/admin/')({ beforeLoad: requireSignIn, component: AdminHome });
