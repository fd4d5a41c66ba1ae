import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { History, House, Inbox, type LucideIcon, Settings, ShoppingBag } from 'lucide-react';
import { call } from '../api/client.ts';

// The bottom tabs of a signed-in person, each an icon over its label. The Inbox tab carries the
// unread count, in its accessible name too ("Inbox, 3 unread").

/** The inbox's queries all start with this key: invalidating it refreshes the list and the count. */
export const notificationsKey = ['notifications'] as const;

/** How often the count is asked for while the app is open (it is also asked on focus). */
const unreadRefreshMs = 60_000;

/** Unread notifications: the service counts them with any page, so one item is asked for. */
export function useUnreadCount(): number {
  const unread = useQuery({
    queryKey: [...notificationsKey, 'unread'],
    queryFn: () => call('listNotifications', { limit: 1 }),
    select: (page) => page.unread,
    refetchInterval: unreadRefreshMs,
    refetchOnWindowFocus: 'always',
  });
  return unread.data ?? 0;
}

const tabs: ReadonlyArray<{
  to: '/' | '/buy' | '/transactions' | '/inbox' | '/settings';
  label: string;
  Icon: LucideIcon;
}> = [
  { to: '/', label: 'Home', Icon: House },
  { to: '/buy', label: 'Buy', Icon: ShoppingBag },
  { to: '/transactions', label: 'History', Icon: History },
  { to: '/inbox', label: 'Inbox', Icon: Inbox },
  { to: '/settings', label: 'Settings', Icon: Settings },
];

/** More than this many unread shows as "99+" on the badge (the tab's accessible name has the number). */
const badgeMax = 99;

export function BottomTabs() {
  const unread = useUnreadCount();
  return (
    <nav aria-label="Main" className="fixed inset-x-0 bottom-0 border-t border-gray-300 bg-white">
      <ul className="mx-auto grid max-w-md grid-cols-5">
        {tabs.map(({ to, label, Icon }) => {
          const count = to === '/inbox' ? unread : 0;
          return (
            <li key={to}>
              <Link
                to={to}
                className="flex flex-col items-center gap-0.5 px-1 pt-2 pb-2 text-xs text-gray-700"
                activeProps={{ className: 'font-bold text-brand', 'aria-current': 'page' }}
                activeOptions={{ exact: to === '/' }}
              >
                <span className="relative">
                  <Icon aria-hidden="true" size={24} />
                  {count > 0 ? (
                    <span
                      aria-hidden="true"
                      data-testid="unread-badge"
                      className="absolute -top-1.5 left-4 min-w-5 rounded-full bg-red-800 px-1 text-center text-xs leading-5 font-bold text-white"
                    >
                      {count > badgeMax ? `${badgeMax}+` : count}
                    </span>
                  ) : null}
                </span>
                {count > 0 ? (
                  // One text for the name ("Inbox, 3 unread"): the word shown and the badge are hidden from it.
                  <>
                    <span aria-hidden="true">{label}</span>
                    <span className="sr-only">{`${label}, ${count} unread`}</span>
                  </>
                ) : (
                  label
                )}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
