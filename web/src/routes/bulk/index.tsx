import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber } from '../../format.ts';
import { bulkStatusWords } from './-lines.tsx';

// A person's bulk orders, newest first, each with how its lines stand; one opens its lines.

function BulkOrders() {
  const orders = useQuery({
    queryKey: ['bulk-orders'],
    queryFn: () => call('listBulkOrders', { limit: 50 }),
  });
  return (
    <Screen title="Bulk orders">
      <Link
        to="/bulk/new"
        className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white"
      >
        New bulk order
      </Link>
      {orders.isPending ? <Waiting label="Loading your orders" /> : null}
      <ErrorNote error={orders.error as never} />
      {orders.data?.items.length === 0 ? <p className="text-gray-700">No bulk orders yet.</p> : null}
      <ul className="flex flex-col gap-2">
        {orders.data?.items.map((order) => (
          <li key={order.id}>
            <Link
              to="/bulk/$id"
              params={{ id: order.id }}
              className="flex flex-col rounded-lg border border-gray-300 p-3 text-gray-900"
            >
              <span className="font-semibold">
                {order.lines.length} {order.service} lines · {formatNairaNumber(order.total)}
              </span>
              <span className="text-sm text-gray-700">
                {bulkStatusWords[order.status]} · {order.counts.success} delivered, {order.counts.failed}{' '}
                failed, {order.counts.processing} pending · {formatDateTime(order.createdAt)}
              </span>
            </Link>
          </li>
        ))}
      </ul>
    </Screen>
  );
}

export const Route = createFileRoute('/bulk/')({ beforeLoad: requireSignIn, component: BulkOrders });
