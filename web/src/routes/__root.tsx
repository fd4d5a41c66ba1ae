import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Link, Outlet } from '@tanstack/react-router';
import { useSyncExternalStore } from 'react';
import { session } from '../api/session.ts';

const nav = [
  { to: '/', label: 'Home' },
  { to: '/buy', label: 'Buy' },
  { to: '/transactions', label: 'History' },
  { to: '/inbox', label: 'Inbox' },
  { to: '/settings', label: 'Settings' },
] as const;

function Root() {
  const signedIn = useSyncExternalStore(session.subscribe, session.signedIn);
  return (
    <div className="min-h-screen bg-white text-gray-900">
      <a href="#main" className="sr-only focus:not-sr-only">
        Skip to content
      </a>
      <header className="bg-brand px-4 py-3 text-white">
        <p className="text-lg font-bold">billrail</p>
      </header>
      <main id="main" className="pb-20">
        <Outlet />
      </main>
      {signedIn ? (
        <nav aria-label="Main" className="fixed inset-x-0 bottom-0 border-t border-gray-300 bg-white">
          <ul className="mx-auto flex max-w-md justify-around">
            {nav.map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  className="block px-3 py-3 text-brand"
                  activeProps={{ className: 'font-bold underline', 'aria-current': 'page' }}
                  activeOptions={{ exact: item.to === '/' }}
                >
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
    </div>
  );
}

export const Route = createRootRouteWithContext<{ queryClient: QueryClient }>()({ component: Root });
