import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { defineOperation } from '../operation.ts';
import { listAlerts } from './alerts.ts';
import * as s from './schemas.ts';

// Alerts are an administrator's reading, whichever domain raised them: the operation sits with the
// alerts, under the admin tag like every other administrator's operation.

/** The alerts operations, closed over the module's deps. */
export const alertOperations = (deps: { db: Kysely<DB> }) => [
  defineOperation({
    name: 'adminListAlerts',
    method: 'GET',
    auth: 'admin',
    summary: 'Operations alerts, newest first',
    tags: ['admin'],
    input: s.listAlertsInput,
    output: s.listAlertsOutput,
    errors: [],
    handler: async ({ input }) => {
      const page = await listAlerts(deps.db, input);
      return { ...page, limit: input.limit, offset: input.offset };
    },
  }),
];
