import { createFileRoute, Link } from '@tanstack/react-router';
import { requireSignIn } from '../../auth-guard.ts';
import { BillIcon, type BillService, billServices } from '../../components/tiles.tsx';
import { Screen } from '../../components/ui.tsx';

// Everything the wallet pays for, as tiles with their icons: the same list as home's tiles, each
// with a line on what it covers.

const notes: Readonly<Record<BillService['to'], string>> = {
  '/buy/airtime': 'MTN, Glo, Airtel, 9mobile',
  '/buy/data': 'Plans for every network',
  '/buy/electricity': 'Prepaid tokens and postpaid bills',
  '/buy/cable': 'DStv, GOtv, StarTimes, Showmax',
  '/buy/betting': 'Fund Bet9ja, SportyBet and more',
  '/buy/education': 'WAEC, NECO, NABTEB, JAMB',
  '/buy/social': 'Followers, likes and views',
  '/buy/airtime-to-cash': 'Sell airtime into your wallet',
};

function Buy() {
  return (
    <Screen title="Buy">
      <ul className="grid grid-cols-2 gap-3">
        {billServices.map(({ to, label, Icon }) => (
          <li key={to}>
            <Link
              to={to}
              className="flex h-full flex-col gap-2 rounded-xl border border-gray-300 bg-gray-100 p-3 text-gray-900"
            >
              <BillIcon Icon={Icon} />
              <span className="text-lg leading-tight font-semibold">{label}</span>
              <span className="text-sm text-gray-700">{notes[to]}</span>
            </Link>
          </li>
        ))}
      </ul>
      <Link
        to="/schedules"
        className="flex items-center justify-between rounded-xl border border-gray-300 p-3 font-semibold text-brand"
      >
        <span>Scheduled purchases</span>
        <span className="text-sm font-normal text-gray-700">Repeat airtime, data, power, TV</span>
      </Link>
      <Link
        to="/bulk"
        className="flex items-center justify-between rounded-xl border border-gray-300 p-3 font-semibold text-brand"
      >
        <span>Bulk orders</span>
        <span className="text-sm font-normal text-gray-700">Airtime or data, up to 100 numbers</span>
      </Link>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/')({ beforeLoad: requireSignIn, component: Buy });
