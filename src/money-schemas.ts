import { z } from 'zod';
import { isNairaAmount, koboToNaira, nairaKoboMax } from './money.ts';

// The schemas of money and instants at the API edge, shared by every operation so that /openapi.json
// describes each amount the same way: naira with at most two decimals, between documented bounds,
// and each instant as an RFC 3339 date-time.
//
// The bounds are documentation (`minimum`/`maximum`), not checks: where an operation has a rule for
// its limits (422 BELOW_MINIMUM / ABOVE_MAXIMUM, with the limit in `details`), that rule answers,
// not the schema with a 400. What the schema refuses is what was always refused: not a number, more
// than two decimals, and (unless said otherwise) zero or less.
//
// No `multipleOf: 0.01`: in binary floating point 0.01 divides hardly any amount exactly
// (0.29 / 0.01 = 28.999999999999996), so a client validator applying it would refuse good amounts.

/** The largest naira amount that crosses the edge exactly (money.ts nairaKoboMax). */
export const nairaMax = koboToNaira(nairaKoboMax);
/** The smallest amount more than nothing: one kobo. */
export const nairaMinPositive = 0.01;

const nairaNote = 'naira with at most 2 decimals';
const nairaMessage = 'naira, at most two decimals';

type Bounds = { minimum?: number; maximum?: number };

/** An amount the service answers with: `what`, in naira, between the bounds (from 0 by default). */
export function nairaOutput(what: string, bounds: Bounds = {}) {
  return z.number().meta({
    description: `${what} (${nairaNote})`,
    minimum: bounds.minimum ?? 0,
    maximum: bounds.maximum ?? nairaMax,
  });
}

type InputOptions = Bounds & {
  /** Zero passes the schema (a markup of nothing, or an amount whose own rule refuses it with 422). */
  zeroAllowed?: boolean;
  /**
   * Amounts above this pass the schema, even those too large to be naira exactly, so that the
   * operation's own rule refuses them with ABOVE_MAXIMUM and the limit: an operation that sets this
   * must compare the amount with its limit before it converts it to kobo.
   */
  ruleRefusesAbove?: number;
  /** A GET's query is text: the amount is read as a number from it. */
  fromQuery?: boolean;
};

/** An amount a client sends: `what`, in naira, at most two decimals, more than 0 unless said otherwise. */
export function nairaInput(what: string, options: InputOptions = {}) {
  const above = options.ruleRefusesAbove;
  const accepted = (n: number) =>
    (above !== undefined && Number.isFinite(n) && n > above) ||
    ((options.zeroAllowed === true || n > 0) && isNairaAmount(n));
  const base = options.fromQuery === true ? z.coerce.number() : z.number();
  return base.refine(accepted, { message: nairaMessage }).meta({
    description: `${what} (${nairaNote})`,
    minimum: options.minimum ?? (options.zeroAllowed === true ? 0 : nairaMinPositive),
    maximum: options.maximum ?? nairaMax,
  });
}

/**
 * An instant the service answers with, as ISO 8601 text in UTC (`Date.toISOString`). Only the
 * document learns the format: the values are the service's own, so nothing is checked on the way out.
 */
export function instantOutput(what?: string) {
  return z.string().meta({ format: 'date-time', ...(what === undefined ? {} : { description: what }) });
}
