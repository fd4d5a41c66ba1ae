import { Link } from '@tanstack/react-router';
import { describeOverLimit, type OverLimit } from '../payments/limits.ts';

// A payment over the day's limit (API.md 17.2), in place of the PIN when the amount is known to be
// over it, or under the PIN when the service refused it (403 LIMIT_EXCEEDED): what is left today, what
// would lift it, and the way there (Verify for the next tier, or Settings for the person's own limit).

export function LimitNote({ over, refused = false }: { over: OverLimit; refused?: boolean }) {
  const [first, ...rest] = describeOverLimit(over, refused);
  return (
    <div
      role={refused ? 'alert' : 'status'}
      className={`flex flex-col gap-2 rounded-lg p-3 ${refused ? 'bg-red-100 text-red-900' : 'bg-amber-100 text-amber-900'}`}
      data-testid="limit-note"
    >
      <p className="font-semibold">{first}</p>
      {rest.map((line) => (
        <p key={line}>{line}</p>
      ))}
      {over.own ? (
        <Link to="/settings" hash="limits" className="font-semibold underline">
          Change your daily limit
        </Link>
      ) : over.upgrade !== null ? (
        <Link to="/verify" className="font-semibold underline">
          Verify for Tier {over.upgrade.tier}
        </Link>
      ) : null}
    </div>
  );
}
