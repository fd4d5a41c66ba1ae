import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useEffect } from 'react';
import { call } from '../../api/client.ts';
import { queryKeys } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { ErrorNote, Screen } from '../../components/ui.tsx';

// The checkout's return page: asks the service about the top-up about every 3 s until it is
// settled. Money is shown as added only when the service says it was credited, and then every
// screen that shows the balance reads it again.

function Return() {
  const { reference } = Route.useSearch();
  const query = useQuery({
    queryKey: ['topup', reference],
    queryFn: () => call('verifyTopup', { reference: reference! }),
    enabled: reference !== undefined,
    refetchInterval: (q) => (q.state.data?.credited || q.state.data?.status === 'failed' ? false : 3_000),
  });
  const topup = query.data;
  const queries = useQueryClient();
  const credited = topup?.credited === true;
  useEffect(() => {
    if (credited) void queries.invalidateQueries({ queryKey: queryKeys.wallet });
  }, [credited, queries]);
  return (
    <Screen title="Payment">
      <ErrorNote error={query.error as never} />
      <p
        role="status"
        aria-live="polite"
        data-testid="topup-status"
        className="rounded-xl bg-brand-light p-4 text-lg"
      >
        {reference === undefined
          ? 'We could not tell which payment this is. Check your history.'
          : topup?.credited
            ? 'Your wallet has been funded.'
            : topup?.status === 'failed'
              ? 'The payment did not go through. Nothing was added to your wallet.'
              : 'Confirming your payment with the bank…'}
      </p>
      <div className="flex flex-wrap gap-4">
        <Link to="/" className="text-brand underline">
          Back home
        </Link>
        {topup?.status === 'failed' ? (
          <Link to="/fund" className="text-brand underline">
            Try again
          </Link>
        ) : null}
      </div>
    </Screen>
  );
}

export const Route = createFileRoute('/fund/return')({
  validateSearch: (search: Record<string, unknown>): { reference?: string } =>
    typeof search.reference === 'string' ? { reference: search.reference } : {},
  beforeLoad: requireSignIn,
  component: Return,
});
