import { z } from 'zod';
import { type DateRange, rangeEnd, rangeStart } from './lagos-time.ts';

// The `from`/`to` query fields of the lists that filter by date (API.md section 5), one reading for
// all of them: a date-only value is a whole Africa/Lagos calendar day, both ends included, so
// `from=D&to=D` is day D; a full instant with its offset is taken as given.

/** The years a filter date may name: before 1970 nothing exists, and the database refuses year 0. */
const filterYears = { min: 1970, max: 9999 };

const dateOrInstant = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .or(z.iso.date())
    .refine(
      (text) => {
        const year = rangeStart(text).getUTCFullYear();
        return year >= filterYears.min && year <= filterYears.max;
      },
      { message: `a date in the years ${filterYears.min} to ${filterYears.max}` },
    )
    .describe(description);

export const dateRangeFields = {
  from: dateOrInstant(
    'From this day or instant on. A date (2026-11-25) starts at the first moment of that day in Africa/Lagos; a full ISO 8601 instant with its offset is taken as given.',
  ).optional(),
  to: dateOrInstant(
    'Up to this day or instant, included. A date (2026-11-25) runs to the last moment of that day in Africa/Lagos, so from=D&to=D is the whole of day D; a full ISO 8601 instant with its offset is taken as given.',
  ).optional(),
};

/** The instants a filter's `from` and `to` stand for. */
export function dateRangeOf(input: { from?: string | undefined; to?: string | undefined }): DateRange {
  return {
    ...(input.from === undefined ? {} : { from: rangeStart(input.from) }),
    ...(input.to === undefined ? {} : { before: rangeEnd(input.to) }),
  };
}

/** A range that ends before it starts is a mistake, not an empty list: 400 on `to`. */
export function requireOrderedRange(
  input: { from?: string | undefined; to?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  const { from, before } = dateRangeOf(input);
  if (from !== undefined && before !== undefined && from >= before) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: '`to` is before `from`' });
  }
}
