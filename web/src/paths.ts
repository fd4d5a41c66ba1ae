/**
 * A path of this app only, fit for a `next=` to go to after a step: one leading slash, and no
 * backslash or control character, which a browser could read as the start of another host
 * (`/\evil.example` is `//evil.example`).
 */
export const isAppPath = (value: string): boolean =>
  value.startsWith('/') &&
  !value.startsWith('//') &&
  ![...value].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * Where "Forgot PIN?" on a PIN prompt goes (routes/pin/change.tsx), with `next` the path to come back
 * to once the new PIN is set. Kept out of the route's module so that linking here does not pull the
 * screen into the linking one's chunk.
 */
export const forgotPinPath = '/pin/change' as const;
