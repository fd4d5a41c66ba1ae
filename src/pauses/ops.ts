import { inUnitOfWork } from '../db/unit-of-work.ts';
import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import {
  type PauseCopy,
  type PauseDeps,
  pauseService,
  pauseViewOf,
  readPauses,
  resumeService,
} from './service-pauses.ts';

// The operators' pauses (API.md section 17.4): pause, resume, list. Each change runs in a unit of
// work (the router's writes for the admin operation commit with it), and this process's copy of the
// pauses is dropped once it committed, so its next purchase sees the change at once.

const tags = ['admin'];

/** What the pause operations close over: the rules' deps and this process's copy of the pauses. */
export type PauseOpsDeps = PauseDeps & { copy: PauseCopy };

/** The pause operations, closed over the module's deps. */
export const pauseOperations = (deps: PauseOpsDeps) => [
  defineOperation({
    name: 'adminPauseService',
    method: 'POST',
    auth: 'admin',
    summary:
      'Pause a service, or a service through one provider (purchases of it routed to another provider go on): its purchases, bulk orders and social orders answer 503 SERVICE_PAUSED before any debit, on every process within 5 s, scheduled runs are skipped with the reason, and the catalogue lists it as unavailable; purchases already accepted go on. Pausing what is paused already sets its reason',
    tags,
    input: s.pauseServiceInput,
    output: s.pauseView,
    errors: [],
    handler: async ({ caller, input, withCommit }) => {
      const pause = await inUnitOfWork(deps.db, withCommit, async (trx) =>
        pauseViewOf(deps, await pauseService(deps, trx, caller.userId, input)),
      );
      deps.copy.changed();
      return pause;
    },
  }),
  defineOperation({
    name: 'adminResumeService',
    method: 'POST',
    auth: 'admin',
    summary:
      'Resume a paused service (through the provider, when the pause named one): purchases go on at once on this process, within 5 s on the others. A pause not in force (another provider, or none) is 404',
    tags,
    input: s.resumeServiceInput,
    output: s.resumeServiceOutput,
    errors: ['NOT_FOUND'],
    handler: async ({ input, withCommit }) => {
      const resumed = await inUnitOfWork(deps.db, withCommit, async (trx) => ({
        ...pauseViewOf(deps, await resumeService(trx, input)),
        resumedAt: deps.now().toISOString(),
      }));
      deps.copy.changed();
      return resumed;
    },
  }),
  defineOperation({
    name: 'adminListPauses',
    method: 'GET',
    auth: 'admin',
    summary: 'Every pause in force, as the database holds it now',
    tags,
    input: s.listPausesInput,
    output: s.listPausesOutput,
    errors: [],
    handler: async () => ({ items: (await readPauses(deps.db)).map((pause) => pauseViewOf(deps, pause)) }),
  }),
];
