import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Outlet } from '@tanstack/react-router';
import { useSyncExternalStore } from 'react';
import { session } from '../api/session.ts';
import { BottomTabs } from '../components/nav.tsx';

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
      {signedIn ? <BottomTabs /> : null}
    </div>
  );
}

export const Route = createRootRouteWithContext<{ queryClient: QueryClient }>()({ component: Root });
