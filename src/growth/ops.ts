import type { Context } from '../context.ts';
import { nairaToKobo } from '../money.ts';
import { defineOperation } from '../operation.ts';
import { type CheckinDeps, checkinStatus, claimCheckin, withdrawCheckin } from './checkin.ts';
import { acknowledgeMilestone, pendingMilestones } from './milestones.ts';
import { referralStatus } from './referral.ts';
import * as s from './schemas.ts';

const tags = ['growth'];

const checkinDeps = (ctx: Context): CheckinDeps => ({
  db: ctx.db,
  clock: ctx.clock,
  jobs: ctx.jobs,
  config: ctx.config.growth,
});

export const growthOperations = [
  defineOperation({
    name: 'getCheckinStatus',
    method: 'GET',
    auth: 'user',
    summary: "Today's check-in, the streak and the rewards accrued",
    tags,
    input: s.emptyInput,
    output: s.checkinStatus,
    errors: [],
    handler: ({ ctx, caller }) => checkinStatus(checkinDeps(ctx), caller.userId),
  }),
  defineOperation({
    name: 'claimCheckin',
    method: 'POST',
    auth: 'user',
    summary: "Claim today's check-in (once per Africa/Lagos calendar day)",
    tags,
    input: s.emptyInput,
    output: s.checkinStatus,
    errors: ['CONFLICT'],
    handler: ({ ctx, caller, withCommit }) => claimCheckin(checkinDeps(ctx), withCommit, caller.userId),
  }),
  defineOperation({
    name: 'withdrawCheckin',
    method: 'POST',
    auth: 'user',
    summary: 'Move all accrued check-in rewards into the wallet',
    tags,
    input: s.emptyInput,
    output: s.withdrawCheckinOutput,
    errors: ['BELOW_MINIMUM'],
    handler: ({ ctx, caller, withCommit }) => withdrawCheckin(checkinDeps(ctx), withCommit, caller.userId),
  }),
  defineOperation({
    name: 'getPendingMilestones',
    method: 'GET',
    auth: 'user',
    summary: 'Savings milestones reached and not yet acknowledged',
    tags,
    input: s.emptyInput,
    output: s.pendingMilestonesOutput,
    errors: [],
    handler: ({ ctx, caller }) => pendingMilestones(ctx.db, caller.userId),
  }),
  defineOperation({
    name: 'ackMilestone',
    method: 'POST',
    auth: 'user',
    summary: 'Acknowledge a pending milestone',
    tags,
    input: s.ackMilestoneInput,
    output: s.ackMilestoneOutput,
    errors: ['NOT_FOUND'],
    handler: ({ ctx, caller, input }) =>
      acknowledgeMilestone(ctx.db, caller.userId, nairaToKobo(input.threshold), ctx.clock.now()),
  }),
  defineOperation({
    name: 'getMyReferralStatus',
    method: 'GET',
    auth: 'user',
    summary: 'Your referral code, your invitees and your locked bonus',
    tags,
    input: s.emptyInput,
    output: s.referralStatus,
    errors: [],
    handler: ({ ctx, caller }) => referralStatus(ctx.db, caller.userId),
  }),
];
