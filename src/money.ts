import assert from 'node:assert/strict';

// Naira exist only at the API edge; everything inside is integer kobo as bigint. Conversions go
// through decimal strings so that no float arithmetic ever touches an amount.

const NAIRA_PATTERN = /^(\d+)(?:\.(\d{1,2}))?$/;

/** True when n is a non-negative naira amount with at most two decimals. */
export function isNairaAmount(n: number): boolean {
  return Number.isFinite(n) && n >= 0 && NAIRA_PATTERN.test(String(n));
}

export function nairaToKobo(naira: number): bigint {
  const match = NAIRA_PATTERN.exec(String(naira));
  assert.ok(match, `not a naira amount with at most two decimals: ${naira}`);
  const whole = match[1] ?? '0';
  const fraction = (match[2] ?? '').padEnd(2, '0');
  return BigInt(whole) * 100n + BigInt(fraction);
}

export function koboToNaira(kobo: bigint): number {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  const text = `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
  return Number(text);
}
