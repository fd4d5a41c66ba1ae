// The signed-in session (API.md section 4): the access token lives in memory only; the refresh token
// in localStorage so that a reload stays signed in. Tokens never go into a URL.

const refreshKey = 'billrail.refresh';

type Listener = () => void;
const listeners = new Set<Listener>();
let accessToken: string | null = null;

export const session = {
  accessToken: () => accessToken,
  refreshToken: () => localStorage.getItem(refreshKey),
  signedIn: () => localStorage.getItem(refreshKey) !== null,
  set(tokens: { accessToken: string; refreshToken: string }) {
    accessToken = tokens.accessToken;
    localStorage.setItem(refreshKey, tokens.refreshToken);
    for (const listener of listeners) listener();
  },
  clear() {
    accessToken = null;
    localStorage.removeItem(refreshKey);
    for (const listener of listeners) listener();
  },
  subscribe(listener: Listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
