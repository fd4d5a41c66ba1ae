import { defineOperation } from '../operation.ts';
import { purchaseErrors } from '../vtu/schemas.ts';
import * as s from './schemas.ts';
import {
  cancelSchedule,
  createSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  type ScheduleDeps,
} from './service.ts';

const tags = ['schedules'];

/** The scheduled purchases' operations, closed over the module's deps. */
export const scheduleOperations = (deps: ScheduleDeps) => [
  defineOperation({
    name: 'createSchedule',
    method: 'POST',
    auth: 'user',
    summary: `Schedule a purchase (airtime, data, electricity, cable), approved once with the PIN: the order is checked and priced as its buy operation would check it now, then run at startAt and every day, week or month after it (Africa/Lagos), until endsAt or runsMax runs. Each run is an ordinary purchase. A run the wallet cannot cover is skipped and you are told; SCHEDULE_SKIPS_MAX (default 3) skips in a row pause the schedule, as does a price above priceTolerancePercent. At most ${s.openSchedulesPerUserMax} open (active or paused) schedules per user: beyond that 422 ABOVE_MAXIMUM (details.unit "count")`,
    tags,
    input: s.createScheduleInput,
    output: s.schedule,
    errors: [
      // Approving debits nothing: a frozen account's runs, and those over the daily limit, are skipped
      // when they come (runner.ts).
      ...purchaseErrors.filter(
        (code) => code !== 'INSUFFICIENT_FUNDS' && code !== 'ACCOUNT_FROZEN' && code !== 'LIMIT_EXCEEDED',
      ),
      'NETWORK_MISMATCH',
      'PRICE_CHANGED',
      'BELOW_MINIMUM',
      'ABOVE_MAXIMUM',
      'UPSTREAM_UNAVAILABLE',
    ],
    handler: ({ caller, input, withCommit }) => createSchedule(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'listSchedules',
    method: 'GET',
    auth: 'user',
    summary: 'Your scheduled purchases, newest first',
    tags,
    input: s.listSchedulesInput,
    output: s.listSchedulesOutput,
    errors: [],
    handler: ({ caller, input }) =>
      listSchedules(deps.db, caller.userId, input.status, { limit: input.limit, offset: input.offset }),
  }),
  defineOperation({
    name: 'pauseSchedule',
    method: 'POST',
    auth: 'user',
    summary:
      'Pause one of your schedules: no run until it is resumed (a paused one stays paused; an ended or cancelled one is 409 CONFLICT)',
    tags,
    input: s.scheduleIdInput,
    output: s.schedule,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) => pauseSchedule(deps, withCommit, caller.userId, input.id),
  }),
  defineOperation({
    name: 'resumeSchedule',
    method: 'POST',
    auth: 'user',
    summary:
      'Resume a paused schedule with no skips counted: due times missed while paused are not made up (a one-off is due at once); an ended or cancelled one is 409 CONFLICT',
    tags,
    input: s.scheduleIdInput,
    output: s.schedule,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) => resumeSchedule(deps, withCommit, caller.userId, input.id),
  }),
  defineOperation({
    name: 'cancelSchedule',
    method: 'POST',
    auth: 'user',
    summary: 'Cancel one of your schedules for good (an ended one is 409 CONFLICT)',
    tags,
    input: s.scheduleIdInput,
    output: s.schedule,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) => cancelSchedule(deps, withCommit, caller.userId, input.id),
  }),
];
