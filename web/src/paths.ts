/**
 * A path of this app only, fit for a `next=` to go to after a step: one leading slash, and no
 * backslash or control character, which a browser could read as the start of another host
 * (`/\evil.example` is `//evil.example`).
 */
export const isAppPath = (value: string): boolean =>
  value.startsWith('/') &&
  !value.startsWith('//') &&
  ![...value].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
