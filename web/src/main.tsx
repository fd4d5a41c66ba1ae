import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createRouter, RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { CallError } from './api/client.ts';
import { session } from './api/session.ts';
import { routeTree } from './routeTree.gen.ts';
import './styles.css';
import { registerServiceWorker } from './service-worker-client.ts';

// The web client (API.md section 15): one chunk per route, server state through TanStack Query.

const queryClient = new QueryClient({
  defaultOptions: {
    // Money screens read fresh; a lost connection shows the last answer (marked stale by the screen).
    // A read the admin declined to give the second factor for is not asked again at once: the
    // retry would only open the dialog they just closed (api/second-factor.ts).
    queries: {
      staleTime: 5_000,
      retry: (failures, error) =>
        failures < 1 && !(error instanceof CallError && error.code === 'SECOND_FACTOR_REQUIRED'),
      networkMode: 'offlineFirst',
    },
    mutations: { retry: false },
  },
});

const router = createRouter({ routeTree, context: { queryClient }, defaultPreload: 'intent' });

// Signed out, in this tab or another, or the session ended (a refresh the service refused): the tab
// forgets what it read for the person and its screen goes to sign-in (the route's guard runs again,
// and brings them back after), so a shared phone shows nothing of theirs and nobody is left on a
// screen that can only fail.
const onSessionChange = () => {
  if (!session.signedIn()) void router.invalidate().then(() => queryClient.clear());
};
session.subscribe(onSessionChange);
session.subscribeElsewhere(onSessionChange);

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);

registerServiceWorker();
