import { Link } from '@tanstack/react-router';
import { useLimits } from '../api/queries.ts';
import { describeHeld } from '../payments/limits.ts';

// Money held over the tier's maximum balance (API.md 17.2), on Home: how much, why, and what releases
// it. Nothing is lost: it moves into the balance by itself, once, when the tier rises or the balance
// falls far enough; the way that is the person's to take is the next tier's verification.

export function HeldBalance({ heldBalance }: { heldBalance: number }) {
  const limits = useLimits({ enabled: heldBalance > 0 });
  const words = describeHeld(heldBalance, limits.data);
  if (words === null) return null;
  return (
    <section
      aria-labelledby="held-title"
      className="flex flex-col gap-2 rounded-xl border-2 border-amber-500 bg-amber-50 p-3 text-amber-950"
      data-testid="held-balance"
    >
      <h2 id="held-title" className="font-semibold">
        {words.held}
      </h2>
      <p className="text-sm">{words.release}</p>
      {words.verifyTier !== null ? (
        <Link to="/verify" className="rounded-lg bg-brand px-4 py-2 text-center font-semibold text-white">
          Verify for Tier {words.verifyTier} to release it
        </Link>
      ) : null}
    </section>
  );
}
