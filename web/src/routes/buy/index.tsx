import { createFileRoute, Link } from '@tanstack/react-router';
import { requireSignIn } from '../../auth-guard.ts';
import { Screen } from '../../components/ui.tsx';

// What can be bought from the wallet.

const services = [
  { to: '/buy/airtime', label: 'Airtime', note: 'MTN, Glo, Airtel, 9mobile' },
  { to: '/buy/data', label: 'Data bundles', note: 'Plans for every network' },
  { to: '/buy/cable', label: 'Cable TV', note: 'DStv, GOtv, StarTimes, Showmax' },
  { to: '/buy/electricity', label: 'Electricity', note: 'Prepaid tokens and postpaid bills' },
  { to: '/buy/betting', label: 'Betting', note: 'Fund Bet9ja, SportyBet and more' },
  { to: '/buy/education', label: 'Exam pins', note: 'WAEC, NECO, NABTEB, JAMB' },
  { to: '/buy/social', label: 'Social boosts', note: 'Followers, likes and views' },
  { to: '/buy/airtime-to-cash', label: 'Airtime to cash', note: 'Sell airtime into your wallet' },
] as const;

function Buy() {
  return (
    <Screen title="Buy">
      <ul className="flex flex-col gap-3">
        {services.map((service) => (
          <li key={service.to}>
            <Link to={service.to} className="block rounded-xl border border-brand p-4 text-brand">
              <span className="block text-lg font-semibold">{service.label}</span>
              <span className="text-sm text-gray-700">{service.note}</span>
            </Link>
          </li>
        ))}
      </ul>
    </Screen>
  );
}

export const Route = createFileRoute('/buy/')({ beforeLoad: requireSignIn, component: Buy });
