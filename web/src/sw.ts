/// <reference lib="webworker" />
import { cleanupOutdatedCaches, createHandlerBoundToURL, precacheAndRoute } from 'workbox-precaching';
import { NavigationRoute, registerRoute } from 'workbox-routing';

// The service worker: the app shell precached (so the last balance and history, kept by the app,
// can be read offline), every client route answered with index.html, and Web Push shown as a
// notification that opens the app where it points.

declare const self: ServiceWorkerGlobalScope;

cleanupOutdatedCaches();
precacheAndRoute(self.__WB_MANIFEST);
registerRoute(
  new NavigationRoute(createHandlerBoundToURL('/index.html'), {
    denylist: [/^\/_serverFn/, /^\/__sandbox/, /^\/api\//, /^\/kyc\//, /^\/openapi\.json/],
  }),
);

self.addEventListener('push', (event) => {
  const payload = (() => {
    try {
      return (event.data?.json() ?? {}) as { title?: string; body?: string; url?: string };
    } catch {
      return { title: 'billrail', body: event.data?.text() ?? '' };
    }
  })();
  event.waitUntil(
    self.registration.showNotification(payload.title ?? 'billrail', {
      body: payload.body ?? '',
      icon: '/icon-192.png',
      data: { url: payload.url ?? '/inbox' },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = (event.notification.data as { url?: string } | undefined)?.url ?? '/';
  event.waitUntil(self.clients.openWindow(url));
});
