import { Workbox } from 'workbox-window';

/** Registers the service worker (offline shell, Web Push) in a production build. */
export function registerServiceWorker(): void {
  if (!import.meta.env.PROD || !('serviceWorker' in navigator)) return;
  void new Workbox('/sw.js', { type: 'module' }).register();
}
