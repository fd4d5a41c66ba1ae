import { Link } from '@tanstack/react-router';
import {
  ArrowLeftRight,
  Dices,
  GraduationCap,
  type LucideIcon,
  Smartphone,
  ThumbsUp,
  Tv,
  Wifi,
  Zap,
} from 'lucide-react';

// Every bill the wallet pays, as a tile with its icon: one list, so a new service shows on home
// (and wherever else the tiles are used) by adding one line here.

export type BillService = {
  to:
    | '/buy/airtime'
    | '/buy/data'
    | '/buy/electricity'
    | '/buy/cable'
    | '/buy/betting'
    | '/buy/education'
    | '/buy/social'
    | '/buy/airtime-to-cash';
  /** The short name on a tile. */
  label: string;
  Icon: LucideIcon;
};

export const billServices: readonly BillService[] = [
  { to: '/buy/airtime', label: 'Airtime', Icon: Smartphone },
  { to: '/buy/data', label: 'Data', Icon: Wifi },
  { to: '/buy/electricity', label: 'Electricity', Icon: Zap },
  { to: '/buy/cable', label: 'TV', Icon: Tv },
  { to: '/buy/betting', label: 'Betting', Icon: Dices },
  { to: '/buy/education', label: 'Exam pins', Icon: GraduationCap },
  { to: '/buy/social', label: 'Social boosts', Icon: ThumbsUp },
  { to: '/buy/airtime-to-cash', label: 'Airtime to cash', Icon: ArrowLeftRight },
];

/** A bill's icon in its round badge, on the home tiles and the buy menu alike. */
export function BillIcon({ Icon }: { Icon: LucideIcon }) {
  return (
    <span className="flex h-10 w-10 items-center justify-center rounded-full bg-brand-light text-brand">
      <Icon aria-hidden="true" size={22} />
    </span>
  );
}

/** The bill tiles, four to a row on a 360 px phone. */
export function BillTiles() {
  return (
    <nav aria-labelledby="bill-tiles-title">
      <h2 id="bill-tiles-title" className="mb-2 text-lg font-semibold">
        Pay bills
      </h2>
      <ul className="grid grid-cols-4 gap-2">
        {billServices.map(({ to, label, Icon }) => (
          <li key={to}>
            <Link
              to={to}
              className="flex h-full flex-col items-center gap-1 rounded-xl bg-gray-100 px-1 py-3 text-center text-sm leading-tight text-gray-900"
            >
              <BillIcon Icon={Icon} />
              {label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
