import { AppError } from './errors.ts';

/**
 * What a limit counts. Naira, the default, is what API.md section 2's amount limits are and carries
 * no `details.unit` (clients have always read `details.limit` as naira); any other unit is named in
 * `details.unit`, so a client writes "at least 7 days" and not "₦7.00".
 */
export type LimitUnit = 'naira' | 'days' | 'count';

const inWords: Record<LimitUnit, (n: number) => string> = {
  naira: (n) => `₦${n}`,
  days: (n) => `${n} days`,
  count: String,
};

/**
 * API.md section 2: a value outside its limits is 422 BELOW_MINIMUM / ABOVE_MAXIMUM with
 * `details.limit` (and `details.unit` when it is not naira), raised before anything is priced or
 * moved. `what` names the value in the message ("electricity purchase", "lock period").
 */
export function requireWithin(
  value: number,
  what: string,
  limits: { min: number; max?: number },
  unit: LimitUnit = 'naira',
): void {
  const details = (limit: number) => (unit === 'naira' ? { limit } : { limit, unit });
  if (value < limits.min) {
    throw new AppError('BELOW_MINIMUM', `the minimum ${what} is ${inWords[unit](limits.min)}`, {
      details: details(limits.min),
    });
  }
  if (limits.max !== undefined && value > limits.max) {
    throw new AppError('ABOVE_MAXIMUM', `the maximum ${what} is ${inWords[unit](limits.max)}`, {
      details: details(limits.max),
    });
  }
}
