import { forgetKept } from '../offline-cache.ts';
import { forgetRotation, readRotation, recordRotation } from './rotation-record.ts';

// The signed-in session (API.md section 4), shared by every tab and window of the app. The access
// token lives in memory only; the refresh token in localStorage, so that a reload stays signed in.
// Tokens never go into a URL.
//
// The service rotates the refresh token on every refresh and revokes the whole session when a
// rotated one comes back, so two tabs must never refresh with the same token. One tab refreshes at a
// time (`exclusively`, the Web Locks API), with the token that is current when it holds the lock
// (`currentRefreshToken`), and hands the new access token to the other tabs over a BroadcastChannel.
// Handing it over rather than letting each tab refresh in turn matters: a refresh ends the access
// token before it (one live access token per session), so tabs refreshing in turn would keep ending
// each other's. A tab whose token was ended before the new one reached it gets a 401 and asks again
// (src/api/client.ts), which finds the new token already there or refreshes with the current one.
// Signing in or out reaches the other tabs through the `storage` event of the refresh token.
//
// What no tab can prevent: a refresh whose answer never arrives (its tab reloaded or closed while it
// was on the way) has still rotated the token at the service, and the next use of the old one is
// taken for a reuse that revokes the session. Only a service that forgave a just-rotated token for
// a moment could spare the person that sign-out.

const refreshKey = 'billrail.refresh';
const lockName = 'billrail-refresh';
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('billrail-session') : null;

type Tokens = { accessToken: string; refreshToken: string };
/** What a tab that got a new access token tells the others. */
type Handover = { accessToken: string; issuedAt: number };
type Listener = () => void;
const listeners = new Set<Listener>();
/** Told when another tab signs in or out. */
const elsewhereListeners = new Set<Listener>();
let accessToken: string | null = null;
/** When this tab's access token was issued (Date.now()): a token handed over later replaces it. */
let issuedAt = 0;

const notify = () => {
  for (const listener of listeners) listener();
};

/** Keeps a new pair of tokens in this tab and hands the access token to the other tabs. */
function keep(tokens: Tokens): void {
  accessToken = tokens.accessToken;
  issuedAt = Date.now();
  localStorage.setItem(refreshKey, tokens.refreshToken);
  channel?.postMessage({ accessToken: tokens.accessToken, issuedAt } satisfies Handover);
  notify();
}

export const session = {
  accessToken: () => accessToken,
  signedIn: () => localStorage.getItem(refreshKey) !== null,

  /** A new session (signing in): its tokens replace whatever this browser had. */
  set(tokens: Tokens) {
    const previous = localStorage.getItem(refreshKey);
    forgetKept();
    keep(tokens);
    void recordRotation(previous, tokens.refreshToken);
  },

  /** The session ended (signed out, or refused by the service): nothing of the person is kept. */
  clear() {
    accessToken = null;
    issuedAt = Date.now();
    localStorage.removeItem(refreshKey);
    forgetKept();
    void forgetRotation();
    notify();
  },

  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  },

  /** Calls `listener` when another tab signs in or out. */
  subscribeElsewhere(listener: Listener): () => void {
    elsewhereListeners.add(listener);
    return () => {
      elsewhereListeners.delete(listener);
    };
  },

  /**
   * Runs `work` while no other tab of this browser runs its own (the Web Locks API); where the
   * browser has no Web Locks, at once (tabs may then race, as they did before).
   */
  exclusively<T>(work: () => Promise<T>): Promise<T> {
    return typeof navigator.locks?.request === 'function' ? navigator.locks.request(lockName, work) : work();
  },

  /**
   * The refresh token to use now, read inside `exclusively`. localStorage alone is not enough:
   * Chromium updates a tab's copy of it from the other tabs asynchronously, so a tab that takes the
   * lock just after another refreshed may still read the token that refresh rotated, and may not have
   * its BroadcastChannel message either (measured in Chromium: three tabs taking turns under a Web
   * Lock, the next holder had neither the value just written nor the message in 25 of 3,000 turns).
   * The rotation record in IndexedDB, written before the lock is released and read in order with
   * every write, says which tokens were rotated and what replaced them.
   */
  async currentRefreshToken(): Promise<string | null> {
    const stored = localStorage.getItem(refreshKey);
    if (stored === null) return null;
    const rotation = await readRotation();
    return rotation?.replaced.includes(stored) ? rotation.current : stored;
  },

  /** A refresh exchanged `used` for `tokens`: recorded before the lock is let go, then kept. */
  async rotated(used: string, tokens: Tokens): Promise<void> {
    await recordRotation(used, tokens.refreshToken);
    keep(tokens);
  },
};

// Another tab signed in or refreshed: its access token is the session's one now (the one this tab
// had, if any, has ended), unless this tab has refreshed since (the message came late).
channel?.addEventListener('message', (event: MessageEvent<Partial<Handover>>) => {
  const { accessToken: handed, issuedAt: handedAt } = event.data ?? {};
  if (typeof handed !== 'string' || typeof handedAt !== 'number' || handedAt < issuedAt) return;
  accessToken = handed;
  issuedAt = handedAt;
});

// Another tab signed in or out (a null key: it cleared localStorage whole, as signing out does). A
// new refresh token over an old one is another tab's refresh, which only the rotation cares about.
let wasSignedIn = session.signedIn();
session.subscribe(() => {
  wasSignedIn = session.signedIn();
});
window.addEventListener('storage', (event) => {
  if ((event.key !== null && event.key !== refreshKey) || session.signedIn() === wasSignedIn) return;
  if (!session.signedIn()) {
    accessToken = null;
    issuedAt = Date.now();
  }
  notify();
  for (const listener of elsewhereListeners) listener();
});
