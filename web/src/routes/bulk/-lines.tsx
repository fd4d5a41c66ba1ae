import type { Output } from '../../api/client.ts';
import { formatNairaNumber } from '../../format.ts';

// What the bulk-order screens share: the words for an order's and a line's state, and its lines'
// list (the pasted lines are read by payments/pasted-lines.ts). A file starting with "-" is no route.

export type BulkOrder = Output<'getBulkOrder'>;

export const bulkStatusWords: Record<BulkOrder['status'], string> = {
  processing: 'Processing',
  completed: 'Completed',
};

export const lineStatusWords: Record<BulkOrder['lines'][number]['status'], string> = {
  processing: 'Pending',
  success: 'Delivered',
  failed: 'Failed, refunded',
};

export function LineStatusList({ order }: { order: BulkOrder }) {
  return (
    <ul className="flex flex-col divide-y divide-gray-200 rounded-lg border border-gray-300">
      {order.lines.map((line, i) => (
        <li key={line.transactionId ?? i} className="flex items-center justify-between gap-2 p-2">
          <span>
            {line.phone}
            {line.amount !== undefined ? (
              <span className="text-gray-700"> · {formatNairaNumber(line.amount)}</span>
            ) : null}
          </span>
          <span
            data-testid="line-status"
            className={
              line.status === 'failed'
                ? 'text-red-800'
                : line.status === 'success'
                  ? 'text-green-800'
                  : 'text-gray-700'
            }
          >
            {lineStatusWords[line.status]}
          </span>
        </li>
      ))}
    </ul>
  );
}
