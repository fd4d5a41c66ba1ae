import type { Kysely } from 'kysely';
import { dateRangeOf } from '../date-filter.ts';
import type { DB } from '../db/schema.ts';
import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { listAuditLog } from './trail.ts';

export const auditOperations = (deps: { db: Kysely<DB> }) => [
  defineOperation({
    name: 'adminListAuditLog',
    method: 'GET',
    auth: 'admin',
    summary: 'The audit log of admin operations, newest first',
    description:
      'The audit log of admin operations, newest first: every admin operation answered, allowed or refused. Who, what (the input with PINs, codes and secrets redacted), the outcome (`ok`, `replayed` or the error code) and from where. `from`/`to` are whole Africa/Lagos days when given as dates. The log is append-only: the database refuses any change to it.',
    tags: ['admin'],
    input: s.listAuditLogInput,
    output: s.listAuditLogOutput,
    errors: [],
    handler: async ({ input }) => {
      const page = { limit: input.limit, offset: input.offset };
      const { items, total } = await listAuditLog(
        deps.db,
        { adminId: input.adminId, operation: input.operation, range: dateRangeOf(input) },
        page,
      );
      return { items, total, ...page };
    },
  }),
];
