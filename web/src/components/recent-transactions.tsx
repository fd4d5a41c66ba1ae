import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { call } from '../api/client.ts';
import { rowOfEntry, TransactionRow, usePurchaseStatuses } from './transaction-row.tsx';

// Home's last few movements of the wallet, in the same rows as History, with the way to all of them.

const shown = 5;

export function RecentTransactions() {
  const query = useQuery({
    queryKey: ['history', 'recent'],
    queryFn: () => call('listTransactions', { limit: shown }),
  });
  const entries = query.data?.items;
  const statuses = usePurchaseStatuses(entries);
  if (query.isError && entries === undefined) return null;
  return (
    <section aria-labelledby="recent-title" className="flex flex-col gap-1">
      <div className="flex items-baseline justify-between">
        <h2 id="recent-title" className="text-lg font-semibold">
          Recent transactions
        </h2>
        <Link to="/transactions" className="text-brand underline">
          See all
        </Link>
      </div>
      {entries?.length === 0 ? <p className="text-gray-700">Nothing here yet.</p> : null}
      <ul aria-label="Recent transactions" className="flex flex-col divide-y divide-gray-200">
        {entries?.map((entry) => {
          const row = rowOfEntry(entry, statuses);
          return <TransactionRow key={row.key} row={row} />;
        })}
      </ul>
    </section>
  );
}
