import { CallError, call } from './api/client.ts';

// Web Push on this device (API.md section 10): the browser's subscription, made with the service's
// VAPID public key, saved at the service; turned off at both ends.

export const pushSupported = (): boolean =>
  'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

/**
 * Push on this phone as the person can change it: on or off, or out of their hands here (the
 * browser has none, or they blocked this site in the browser's own settings, which a page cannot undo).
 */
export type PushState = 'unsupported' | 'blocked' | 'on' | 'off';

/** This phone's push state now: on only with the browser's permission and a subscription. */
export async function currentPushState(): Promise<PushState> {
  if (!pushSupported()) return 'unsupported';
  if (Notification.permission === 'denied') return 'blocked';
  if (Notification.permission !== 'granted') return 'off';
  // getRegistration, not ready: ready never settles where no service worker was registered. A
  // browser whose push machinery does not answer in time is shown off: the switch offers to try.
  try {
    const registration = await within(navigator.serviceWorker.getRegistration(), pushSubscribeMs);
    const subscription = await within(
      registration?.pushManager.getSubscription() ?? Promise.resolve(null),
      pushSubscribeMs,
    );
    return subscription ? 'on' : 'off';
  } catch {
    return 'off';
  }
}

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

/**
 * How long the browser's push machinery may take to answer (its service worker, its subscription,
 * its push service). A browser that cannot reach its push service (no network to it, as in a
 * headless browser) may never answer at all, and neither the switch nor the state may wait for ever.
 */
export const pushSubscribeMs = 10_000;

/**
 * What `work` resolves to, or a rejection once `ms` have passed. A value that arrives after that
 * goes to `late` (a subscription made after the page said push stayed off is unsubscribed there).
 */
function within<T>(work: Promise<T>, ms: number, late: (value: T) => void = () => undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reject(new Error('the browser did not answer in time'));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (timedOut) late(value);
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Turns push on for this phone: asks the browser's permission, subscribes, and saves the
 * subscription at the service. Answers the state after, or `unreachable` when the browser's own push
 * service refused or could not be reached (nothing was saved). A refusal of the service throws.
 */
export async function enablePush(): Promise<PushState | 'unreachable'> {
  if (!pushSupported()) return 'unsupported';
  const permission = await Notification.requestPermission();
  if (permission === 'denied') return 'blocked';
  if (permission !== 'granted') return 'off';
  const { publicKey } = await call('getPushPublicKey', {});
  let subscription: PushSubscription;
  try {
    // One deadline over the browser's side: its service worker, the subscription it may hold, and a
    // new one from its push service (nothing was saved at the service yet).
    const deadline = Date.now() + pushSubscribeMs;
    const left = () => Math.max(0, deadline - Date.now());
    const { pushManager } = await within(navigator.serviceWorker.ready, left());
    subscription =
      (await within(pushManager.getSubscription(), left())) ??
      (await within(
        pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) }),
        left(),
        (lateOne) => void lateOne.unsubscribe().catch(() => undefined),
      ));
  } catch {
    return 'unreachable';
  }
  await call('savePushSubscription', {
    endpoint: subscription.endpoint,
    p256dh: base64url(subscription.getKey('p256dh')),
    auth: base64url(subscription.getKey('auth')),
  });
  return 'on';
}

/** Turns push off for this phone, at the service and in the browser. A refusal of the service throws. */
export async function disablePush(): Promise<PushState> {
  const registration = await navigator.serviceWorker.getRegistration();
  const subscription = await registration?.pushManager.getSubscription();
  if (subscription) {
    // NOT_FOUND: the service had forgotten it already (a push service said it was gone): done there.
    await call('deletePushSubscription', { endpoint: subscription.endpoint }).catch((error: unknown) => {
      if (!(error instanceof CallError && error.code === 'NOT_FOUND')) throw error;
    });
    await subscription.unsubscribe();
  }
  return currentPushState();
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
