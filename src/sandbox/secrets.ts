import { timingSafeEqual } from 'node:crypto';

/**
 * The simulators' check of a credential, as the real providers would: the whole value, compared in
 * constant time (lengths first). Anything but a string (a missing or repeated header) is refused.
 */
export function sameSecret(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
