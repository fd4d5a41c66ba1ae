import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { CommitWriter } from '../db/unit-of-work.ts';
import type { DomainModule } from '../module.ts';
import { auditOperations } from './ops.ts';
import { type AuditEntry, recordAuditEntry, writeAuditEntries } from './trail.ts';

export type { AuditEntry };

// The append-only audit trail of the admin operations (API.md section 17.4, decision 0039). The
// router writes it (every admin operation, generically); this module owns the table and lists it.

export type AuditModuleDeps = {
  /** Where the trail is kept (audit_log) and read by adminListAuditLog. */
  db: Kysely<DB>;
};

export type AuditApi = {
  /** Writes entries in a transaction that commits the operation they report (with its answer). */
  writeWithCommit: CommitWriter<AuditEntry>;
  /** Writes one entry on its own (a refusal, a read, an answer not committed with a change). */
  record: (entry: AuditEntry) => Promise<void>;
};

export function createAuditModule(deps: AuditModuleDeps): DomainModule & { api: AuditApi } {
  return {
    operations: auditOperations(deps),
    jobs: [],
    subscribers: [],
    api: {
      writeWithCommit: writeAuditEntries,
      record: (entry) => recordAuditEntry(deps.db, entry),
    },
  };
}
