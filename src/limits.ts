import { AppError } from './errors.ts';

/**
 * API.md section 2: an amount outside its limits is 422 BELOW_MINIMUM / ABOVE_MAXIMUM with
 * `details.limit` (naira), raised before anything is priced or moved. `what` names the amount in the
 * message ("electricity purchase", "savings lock").
 */
export function requireWithin(
  naira: number,
  what: string,
  limits: { min: number; max?: number },
  unit: (n: number) => string = (n) => `₦${n}`,
): void {
  if (naira < limits.min) {
    throw new AppError('BELOW_MINIMUM', `the minimum ${what} is ${unit(limits.min)}`, {
      details: { limit: limits.min },
    });
  }
  if (limits.max !== undefined && naira > limits.max) {
    throw new AppError('ABOVE_MAXIMUM', `the maximum ${what} is ${unit(limits.max)}`, {
      details: { limit: limits.max },
    });
  }
}
