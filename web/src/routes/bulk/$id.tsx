import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { PriceSummary } from '../../components/price-summary.tsx';
import { ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatNairaNumber } from '../../format.ts';
import { processingPollMs } from '../../payments/poll.ts';
import { bulkStatusWords, LineStatusList } from './-lines.tsx';

// One bulk order: how many lines were delivered, are pending or failed, what was charged and given
// back, and each line's state, asked again while any line is still processing.

function BulkOrderScreen() {
  const { id } = Route.useParams();
  const order = useQuery({
    queryKey: ['bulk-order', id],
    queryFn: () => call('getBulkOrder', { id }),
    refetchInterval: (query) => processingPollMs(query.state.data),
  });
  const o = order.data;
  return (
    <Screen title="Bulk order">
      {order.isPending ? <Waiting label="Loading the order" /> : null}
      <ErrorNote error={order.error as never} />
      {o !== undefined ? (
        <>
          <p role="status" aria-live="polite" className="text-lg font-semibold" data-testid="bulk-status">
            {bulkStatusWords[o.status]}: {o.counts.success} delivered, {o.counts.processing} pending,{' '}
            {o.counts.failed} failed
          </p>
          <PriceSummary
            rows={[
              { label: 'Lines', value: String(o.lines.length) },
              { label: 'Charged', value: formatNairaNumber(o.charged) },
              { label: 'Refunded', value: formatNairaNumber(o.refunded) },
            ]}
            total={Math.round((o.charged - o.refunded) * 100) / 100}
            totalLabel="You paid"
          />
          <LineStatusList order={o} />
        </>
      ) : null}
      <Link to="/bulk" className="text-center font-semibold text-brand underline">
        All bulk orders
      </Link>
    </Screen>
  );
}

export const Route = createFileRoute('/bulk/$id')({ beforeLoad: requireSignIn, component: BulkOrderScreen });
