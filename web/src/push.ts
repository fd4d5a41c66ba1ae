import { call } from './api/client.ts';

// Web Push on this device (API.md section 10): the browser's subscription, made with the service's
// VAPID public key, saved at the service; turned off at both ends.

export const pushSupported = (): boolean =>
  'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(base64url.length / 4) * 4, '=');
  const binary = atob(base64);
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const base64url = (buffer: ArrayBuffer | null): string =>
  buffer === null
    ? ''
    : btoa(String.fromCharCode(...new Uint8Array(buffer)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, '');

export async function enablePush(): Promise<string> {
  if ((await Notification.requestPermission()) !== 'granted')
    return 'Notifications are blocked for this site.';
  const registration = await navigator.serviceWorker.ready;
  const { publicKey } = await call('getPushPublicKey', {});
  let subscription: PushSubscription;
  try {
    subscription =
      (await registration.pushManager.getSubscription()) ??
      (await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: keyBytes(publicKey),
      }));
  } catch {
    // The browser's own push service refused or could not be reached: nothing was saved.
    return 'This browser could not reach its push service. Try again later.';
  }
  await call('savePushSubscription', {
    endpoint: subscription.endpoint,
    p256dh: base64url(subscription.getKey('p256dh')),
    auth: base64url(subscription.getKey('auth')),
  });
  return 'Notifications are on for this phone.';
}

export async function disablePush(): Promise<string> {
  const registration = await navigator.serviceWorker.ready;
  const subscription = await registration.pushManager.getSubscription();
  if (subscription !== null) {
    await call('deletePushSubscription', { endpoint: subscription.endpoint });
    await subscription.unsubscribe();
  }
  return 'Notifications are off for this phone.';
}

/**
 * How long one step of signing out may wait for the service: past it the person is signed out here
 * all the same (a stalled request must never keep a shared phone signed in).
 */
export const signOutStepMs = 5_000;

/**
 * Signing out: this phone stops getting the person's pushes (a shared phone must not keep showing
 * the last person's purchases and transfers). Called while the session is still valid, it deletes
 * the subscription at the service (NOT_FOUND means it is gone already: done) and then unsubscribes
 * the browser, so that the browser's push service answers 404/410 for the endpoint (and the service
 * forgets it) even if the delete did not get through. Never throws: signing out goes on regardless.
 */
export async function forgetPushOnThisDevice(): Promise<void> {
  if (!pushSupported()) return;
  try {
    // getRegistration, not ready: ready never settles where no service worker was registered.
    const registration = await navigator.serviceWorker.getRegistration();
    const subscription = await registration?.pushManager.getSubscription();
    if (subscription === null || subscription === undefined) return;
    await call(
      'deletePushSubscription',
      { endpoint: subscription.endpoint },
      { signal: AbortSignal.timeout(signOutStepMs) },
    ).catch(() => undefined);
    await subscription.unsubscribe();
  } catch {
    // The browser could not tell or unsubscribe: nothing more this page can do.
  }
}
