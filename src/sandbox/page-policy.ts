import { createHash } from 'node:crypto';

// The sandbox's pages (the checkout, the face check, the feature phone) are single documents whose
// one inline style and one inline script are allowed by their hashes: nothing else runs on them, so a
// value shown on a page (a reference, a screen the service answered) cannot become code.

/** A CSP source naming exactly this inline text. */
export const inlineSourceHash = (text: string): string =>
  `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Only the page's own inline style and script run, and it talks only to its own origin. */
export function scriptedPagePolicy(style: string, script: string): string {
  return [
    "default-src 'none'",
    `style-src ${inlineSourceHash(style)}`,
    `script-src ${inlineSourceHash(script)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
