import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork } from '../db/unit-of-work.ts';
import { notFound } from '../errors.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { defineOperation } from '../operation.ts';
import { freezeUser, unfreezeUser } from './freeze.ts';
import * as s from './schemas.ts';
import { revokeSessions } from './sessions.ts';
import { findUserById } from './users.ts';

// The operators' work on accounts (API.md section 17.4, decision 0040): freezing one, and ending
// sessions at once. Each runs its transaction through inUnitOfWork, so that what the router writes
// with the request (its Idempotency-Key answer, its audit row) commits with the change.

const tags = ['admin'];

type OperatorDeps = { db: Kysely<DB>; clock: Clock; jobs: JobQueue };

/** The operators' account operations, closed over the module's deps. */
export const operatorOperations = (deps: OperatorDeps) => [
  defineOperation({
    name: 'adminFreezeUser',
    method: 'POST',
    auth: 'admin',
    summary: 'Freeze an account: nothing can be paid from it until it is unfrozen',
    description:
      'Freeze an account: nothing can be paid from it until it is unfrozen. The person can still sign in and see everything, and credits still land (top-ups, refunds, transfers in, adjustments), but every payment out at their request (purchases of every kind, social and bulk orders, scheduled runs, transfers) is 403 ACCOUNT_FROZEN before any debit. Decided under the wallet’s lock: no payment accepted after the freeze commits. The person is told that the account is frozen, never the reason. Freezing an account frozen already is 409 CONFLICT (details.frozenAt); an unknown userId is 404',
    tags,
    input: s.freezeUserInput,
    output: s.freezeStateOutput,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) =>
      freezeUser(deps, withCommit, { userId: input.userId, reason: input.reason, adminId: caller.userId }),
  }),
  defineOperation({
    name: 'adminUnfreezeUser',
    method: 'POST',
    auth: 'admin',
    summary: 'Unfreeze an account: payments out are accepted again',
    description:
      'Unfreeze an account: payments out are accepted again. Scheduled purchases run at their next times. The person is told. Unfreezing an account that is not frozen is 409 CONFLICT; an unknown userId is 404',
    tags,
    input: s.unfreezeUserInput,
    output: s.freezeStateOutput,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ input, withCommit }) => unfreezeUser(deps, withCommit, { userId: input.userId }),
  }),
  defineOperation({
    name: 'adminRevokeSessions',
    method: 'POST',
    auth: 'admin',
    summary: 'End sessions at once: one person’s ({userId}) or everyone’s ({all: true})',
    description:
      'End sessions at once: one person’s ({userId}) or everyone’s ({all: true}), on every process; everyone’s spares the calling operator’s own session, so that the operator is not locked out mid-incident (their other sessions end too). Their access tokens answer 401 from the next request and their refresh tokens are refused; each person signs in again. Answers how many sessions were ended (0 for a person with none left); an unknown userId is 404',
    tags,
    input: s.revokeSessionsInput,
    output: s.revokeSessionsOutput,
    errors: ['NOT_FOUND'],
    handler: async ({ caller, input, withCommit }) => {
      const now = deps.clock.now();
      const target = 'userId' in input ? input : { all: true as const, sparedSessionId: caller.sessionId };
      return inUnitOfWork(deps.db, withCommit, async (trx) => {
        // A mistyped id is told apart from a person with no session left.
        if ('userId' in target && (await findUserById(trx, target.userId)) === undefined)
          throw notFound('user');
        return { revoked: await revokeSessions(trx, target, now) };
      });
    },
  }),
];
