import { nairaToKobo } from '../money.ts';
import { defineOperation } from '../operation.ts';
import { type CheckinDeps, checkinStatus, claimCheckin, withdrawCheckin } from './checkin.ts';
import { acknowledgeMilestone, pendingMilestones } from './milestones.ts';
import { type ReferralDeps, referralStatus } from './referral.ts';
import * as s from './schemas.ts';

const tags = ['growth'];

/** The growth operations, closed over the module's deps. */
export const growthOperations = (deps: CheckinDeps & Pick<ReferralDeps, 'users'>) => [
  defineOperation({
    name: 'getCheckinStatus',
    method: 'GET',
    auth: 'user',
    summary: "Today's check-in, the streak and the rewards accrued",
    tags,
    input: s.emptyInput,
    output: s.checkinStatus,
    errors: [],
    handler: ({ caller }) => checkinStatus(deps, caller.userId),
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
    handler: ({ caller, withCommit }) => claimCheckin(deps, withCommit, caller.userId),
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
    handler: ({ caller, withCommit }) => withdrawCheckin(deps, withCommit, caller.userId),
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
    handler: ({ caller }) => pendingMilestones(deps.db, caller.userId),
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
    handler: ({ caller, input }) =>
      acknowledgeMilestone(deps.db, caller.userId, nairaToKobo(input.threshold), deps.clock.now()),
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
    handler: ({ caller }) => referralStatus(deps, caller.userId),
  }),
];
