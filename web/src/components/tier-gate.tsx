import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { useMe } from '../api/queries.ts';
import type { Tier } from '../payments/tiers.ts';
import { tiers } from './kyc-tiers.tsx';
import { Waiting } from './ui.tsx';

// Before a form a person cannot use yet: the tier it needs, what each tier unlocks, and the way to
// Verify, instead of a refusal after they have typed everything and their PIN.

export function TierGate({ need, what, children }: { need: Tier; what: string; children: ReactNode }) {
  const me = useMe();
  // Offline or failing, the form is shown: the service still refuses what the tier does not allow.
  if (me.data === undefined) return me.isPending ? <Waiting label="Loading" /> : children;
  if (me.data.kycTier >= need) return children;
  return (
    <section aria-labelledby="tier-needed" className="flex flex-col gap-3 rounded-xl bg-amber-50 p-4">
      <h2 id="tier-needed" className="text-lg font-semibold text-amber-950">
        {what} needs Tier {need} verification
      </h2>
      <p className="text-amber-950">
        You are at Tier {me.data.kycTier}. For Tier {need}: {tiers[need].needs}.
      </p>
      <ul className="flex flex-col gap-1 text-amber-950">
        {([1, 2, 3] as const).map((tier) => (
          <li key={tier}>
            <strong>
              Tier {tier} ({tiers[tier].name}):
            </strong>{' '}
            {tiers[tier].unlocks.join('. ')}.
          </li>
        ))}
      </ul>
      <Link
        to="/verify"
        className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white"
      >
        Verify now
      </Link>
    </section>
  );
}
