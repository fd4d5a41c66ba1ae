import assert from 'node:assert/strict';

// Naira exist only at the API edge; everything inside is integer kobo as bigint. Conversions go
// through decimal strings so that no float arithmetic ever touches an amount.

const NAIRA_PATTERN = /^(\d+)(?:\.(\d{1,2}))?$/;

/**
 * The largest amount, in kobo, that crosses the edge as a JSON number: 9,999,999,999,999.99 naira.
 * A number carries 15 significant decimal digits exactly; beyond that two naira amounts a kobo apart
 * can be the same number (90071992547409.99 reads as ...409.98), so larger amounts are refused
 * rather than silently turned into other amounts.
 */
export const nairaKoboMax = 999_999_999_999_999n;

function parseNaira(naira: number): bigint | null {
  if (!Number.isFinite(naira) || naira < 0) return null;
  const match = NAIRA_PATTERN.exec(String(naira));
  if (match === null) return null;
  const whole = match[1] ?? '0';
  const fraction = (match[2] ?? '').padEnd(2, '0');
  const kobo = BigInt(whole) * 100n + BigInt(fraction);
  return kobo <= nairaKoboMax ? kobo : null;
}

/** True when n is a non-negative naira amount with at most two decimals, within nairaKoboMax. */
export function isNairaAmount(n: number): boolean {
  return parseNaira(n) !== null;
}

export function nairaToKobo(naira: number): bigint {
  const kobo = parseNaira(naira);
  assert.ok(kobo !== null, `not a naira amount (two decimals at most, within nairaKoboMax): ${naira}`);
  return kobo;
}

export function koboToNaira(kobo: bigint): number {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  assert.ok(abs <= nairaKoboMax, `${kobo} kobo cannot be shown exactly as a naira number`);
  const text = `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
  return Number(text);
}

/** ₦1,234.50 from 123450 kobo, without a float: how amounts read in messages and pages. */
export function formatNaira(kobo: bigint): string {
  const sign = kobo < 0n ? '-' : '';
  const abs = kobo < 0n ? -kobo : kobo;
  return `${sign}₦${(abs / 100n).toLocaleString('en-NG')}.${(abs % 100n).toString().padStart(2, '0')}`;
}

// Percentages likewise exist only at the API edge (a markup's percent): inside they are whole basis
// points, converted through their digits like naira.

/** 100 % in basis points. */
export const basisPointsMax = 10_000;

const percentPattern = /^(\d{1,3})(?:\.(\d{1,2}))?$/;

/** A percentage with at most two decimals as whole basis points (2.5 → 250), through its digits. */
export function percentToBasisPoints(percent: number): number | null {
  if (!Number.isFinite(percent) || percent < 0) return null;
  const match = percentPattern.exec(String(percent));
  if (match === null) return null;
  const bp = Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
  return bp <= basisPointsMax ? bp : null;
}

/** Basis points back to a percentage for the API edge (250 → 2.5): exact, since bp is whole. */
export function basisPointsToPercent(bp: number): number {
  return Number(`${Math.trunc(bp / 100)}.${String(bp % 100).padStart(2, '0')}`);
}
