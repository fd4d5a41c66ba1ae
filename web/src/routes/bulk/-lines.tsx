import type { networkNames } from '../../../../src/shared/networks.ts';
import { toE164 } from '../../../../src/shared/phone-number.ts';
import { networkOfPhone } from '../../../../src/shared/prefixes.ts';
import type { Output } from '../../api/client.ts';
import { formatNaira } from '../../format.ts';

// What the bulk-order screens share: reading pasted lines, and the words for an order's and a line's
// state. (A file starting with "-" is not a route.)

export type BulkOrder = Output<'getBulkOrder'>;
export type Network = keyof typeof networkNames;
export type DraftLine = { phone: string; amount: number; network: Network | null };

export const bulkStatusWords: Record<BulkOrder['status'], string> = {
  processing: 'Processing',
  completed: 'Completed',
};

export const lineStatusWords: Record<BulkOrder['lines'][number]['status'], string> = {
  processing: 'Pending',
  success: 'Delivered',
  failed: 'Failed, refunded',
};

/** The network a number belongs to, by its prefix; null when it is none of the four. */
export function networkOf(phone: string): Network | null {
  const e164 = toE164(phone);
  const found = e164 === null ? null : networkOfPhone(e164);
  return found === null || found === 'other' ? null : found;
}

/**
 * Lines pasted one per row: a phone number and, for airtime, an amount ("08031234567, 500" or
 * "08031234567 500"); rows that cannot be read are reported by number, not dropped in silence.
 */
export function readLines(text: string, needAmount: boolean): { lines: DraftLine[]; unreadable: number[] } {
  const lines: DraftLine[] = [];
  const unreadable: number[] = [];
  text.split(/\r?\n/).forEach((row, i) => {
    const cells = row.split(/[\s,;]+/).filter((cell) => cell !== '');
    if (cells.length === 0) return;
    const phone = cells[0]!;
    const amount = Number(cells[1]?.replace(/[₦,]/g, ''));
    if (toE164(phone) === null || (needAmount && !(amount > 0))) {
      unreadable.push(i + 1);
      return;
    }
    lines.push({ phone, amount: needAmount ? amount : 0, network: networkOf(phone) });
  });
  return { lines, unreadable };
}

export function LineStatusList({ order }: { order: BulkOrder }) {
  return (
    <ul className="flex flex-col divide-y divide-gray-200 rounded-lg border border-gray-300">
      {order.lines.map((line, i) => (
        <li key={line.transactionId ?? i} className="flex items-center justify-between gap-2 p-2">
          <span>
            {line.phone}
            {line.amount !== undefined ? (
              <span className="text-gray-700"> · {formatNaira(line.amount)}</span>
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
