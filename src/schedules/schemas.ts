import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { instantOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';
import { buyAirtimeInput, buyDataInput, buyElectricityInput, subscribeCableInput } from '../vtu/schemas.ts';

// Request and answer shapes of scheduled purchases (API.md section 16). A schedule's order is the buy
// operation's own fields without the PIN, checked by that operation's own schema, so that a schedule
// can hold nothing its purchase would refuse as malformed.

export const scheduleServices = ['airtime', 'data', 'electricity', 'cable'] as const;
export type ScheduleService = (typeof scheduleServices)[number];
export const frequencies = ['day', 'week', 'month'] as const;
export type Frequency = (typeof frequencies)[number];
export const scheduleStatuses = ['active', 'paused', 'ended', 'cancelled'] as const;
export type ScheduleStatus = (typeof scheduleStatuses)[number];

/** The most runs one schedule may be given (a daily schedule for almost three years). */
export const runsMaxLimit = 1_000;
/** The most a price may rise above the approved one and still run, percent. */
export const priceTolerancePercentMax = 50;
/** The most schedules one user keeps active or paused at once. */
export const openSchedulesPerUserMax = 50;
/** The first run may be at most this far ahead, days. */
export const startAheadDaysMax = 366;

/** Each service's order: its buy operation's input without the PIN. */
export const orderSchemas = {
  airtime: buyAirtimeInput.omit({ pin: true }),
  data: buyDataInput.omit({ pin: true }),
  electricity: buyElectricityInput.omit({ pin: true }),
  cable: subscribeCableInput.omit({ pin: true }),
} as const;

const instant = z.iso
  .datetime({ offset: true })
  .describe('An ISO 8601 instant, e.g. 2026-12-01T08:00:00+01:00');

const when = {
  startAt: instant.describe('When the first run is due; not in the past'),
  every: z
    .enum(frequencies)
    .optional()
    .describe(
      'Absent: one run only. day / week / month in Africa/Lagos time (month: the same day, the month’s last day when it has none)',
    ),
  endsAt: instant.optional().describe('No run is due after it; after startAt'),
  runsMax: z
    .number()
    .int()
    .min(1)
    .max(runsMaxLimit)
    .optional()
    .describe('The schedule ends after this many runs'),
  priceTolerancePercent: z
    .number()
    .int()
    .min(0)
    .max(priceTolerancePercentMax)
    .default(0)
    .describe(
      'Data plans and bouquets: how far above the approved price (the order’s amount) a run may still buy, percent; above it the schedule pauses',
    ),
  pin,
};

const request = <K extends ScheduleService>(service: K) =>
  z.object({ service: z.literal(service), order: orderSchemas[service], ...when }).strict();

export const createScheduleInput = z
  .discriminatedUnion('service', [
    request('airtime'),
    request('data'),
    request('electricity'),
    request('cable'),
  ])
  .superRefine((input, ctx) => {
    if (input.endsAt !== undefined && Date.parse(input.endsAt) <= Date.parse(input.startAt)) {
      ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'endsAt must be after startAt' });
    }
    if (input.every === undefined && input.runsMax !== undefined && input.runsMax > 1) {
      ctx.addIssue({ code: 'custom', path: ['runsMax'], message: 'a schedule without every runs once' });
    }
  });
export type CreateScheduleRequest = z.output<typeof createScheduleInput>;

export const schedule = z.object({
  id: z.string(),
  service: z.enum(scheduleServices),
  order: z
    .record(z.string(), z.unknown())
    .describe('The buy operation’s fields without the PIN, as approved (amount: the approved price)'),
  status: z.enum(scheduleStatuses),
  nextRunAt: instantOutput('When the next run is due (the last due time once ended or cancelled)'),
  every: z.enum(frequencies).optional(),
  endsAt: instantOutput('No run is due after it').optional(),
  runsMax: z.number().int().optional(),
  priceTolerancePercent: z.number().int(),
  runs: z.number().int().describe('Purchases made so far'),
  skipsInRow: z.number().int().describe('Runs skipped in a row because the wallet could not cover them'),
  pausedReason: z.string().optional(),
  createdAt: instantOutput(),
});
export type ScheduleView = z.infer<typeof schedule>;

export const listSchedulesInput = z
  .object({ ...pageInput, status: z.enum(scheduleStatuses).optional() })
  .strict();
export const listSchedulesOutput = z.object({
  items: z.array(schedule).describe('Newest first'),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

export const scheduleIdInput = z.object({ id: z.uuid() }).strict();
