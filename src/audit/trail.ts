import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { CommitWriter } from '../db/unit-of-work.ts';
import { newId } from '../ids.ts';
import type { DateRange } from '../lagos-time.ts';
import { newestFirstPage, type Page } from '../paging.ts';

// The audit trail of the admin operations (API.md section 17.4, decision 0039): one row for every
// admin operation answered, allowed or refused, written by the router (http/router.ts), which knows
// every operation, so that one added tomorrow is audited without a line of its own. An allowed POST's
// row is written by the transaction that commits what it did (with its Idempotency-Key answer); any
// other answer's row on its own. The table only grows: its trigger refuses UPDATE, DELETE, TRUNCATE.

/** One admin operation as answered. */
export type AuditEntry = {
  at: Date;
  /** The caller: an administrator, or a user refused for lacking the role. */
  adminId: string;
  operation: string;
  /** The input as sent or validated (redacted here); undefined or null when never read. */
  input: unknown;
  /** `ok`, `replayed`, or the error code of the refusal. */
  outcome: string;
  ip: string;
};

const REDACTED = '[redacted]';

/**
 * The words of a field name that make its value a credential: `pin`, `otpCode`, `secret`,
 * `refresh_token`, `newPassword`, `apiKey`. Whole words of the name (camelCase, snake_case, kebab),
 * so that `shipping` or `keyboard` keep their values.
 */
const CREDENTIAL_WORDS: ReadonlySet<string> = new Set([
  'pin',
  'code',
  'otp',
  'totp',
  'secret',
  'token',
  'password',
  'passcode',
  'passphrase',
  'key',
  'signature',
  'cvv',
]);

const isCredentialName = (name: string): boolean =>
  name.split(/[_\-\s.]+|(?<=[a-z0-9])(?=[A-Z])/).some((word) => CREDENTIAL_WORDS.has(word.toLowerCase()));

/**
 * Text PostgreSQL's jsonb stores: NUL characters dropped, and half of a surrogate pair (which JSON
 * escapes as \ud800 and jsonb refuses) made U+FFFD. A refusal of such input is still audited.
 */
const storable = (text: string): string => text.replaceAll('\u0000', '').toWellFormed();

/**
 * The input with every credential's value replaced, at any depth, and its text made storable (the
 * router refuses NUL characters, but half of a surrogate pair passes the schemas and validation).
 * Input nested deeper than the router allows is never read this far.
 */
export function redactInput(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (value === null || typeof value !== 'object') return value ?? null;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(redactInput);
  return Object.fromEntries(
    Object.entries(value).map(([name, child]) => [
      storable(name),
      isCredentialName(name) ? REDACTED : redactInput(child),
    ]),
  );
}

const rowOf = (entry: AuditEntry) => ({
  id: newId(),
  created_at: entry.at,
  admin_id: entry.adminId,
  operation: entry.operation,
  input: entry.input === undefined ? null : JSON.stringify(redactInput(entry.input)),
  outcome: entry.outcome,
  ip: entry.ip,
});

/** Writes entries in the given transaction: the writer a POST's completion hands its commit. */
export const writeAuditEntries: CommitWriter<AuditEntry> = async (trx, entries) => {
  if (entries.length === 0) return;
  await trx.insertInto('audit_log').values(entries.map(rowOf)).execute();
};

/** Writes one entry on its own: a refusal, a GET, an answer not committed with a change. */
export async function recordAuditEntry(db: Kysely<DB> | Transaction<DB>, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(rowOf(entry)).execute();
}

export type AuditFilter = { adminId?: string | undefined; operation?: string | undefined; range: DateRange };

/** A page of the trail, newest first, filtered. */
export async function listAuditLog(db: Kysely<DB>, filter: AuditFilter, page: Page) {
  let query = db.selectFrom('audit_log');
  if (filter.adminId !== undefined) query = query.where('admin_id', '=', filter.adminId);
  if (filter.operation !== undefined) query = query.where('operation', '=', filter.operation);
  if (filter.range.from !== undefined) query = query.where('created_at', '>=', filter.range.from);
  if (filter.range.before !== undefined) query = query.where('created_at', '<', filter.range.before);
  const { rows, total } = await newestFirstPage(query, page);
  return {
    items: rows.map((row) => ({
      id: row.id,
      at: row.created_at.toISOString(),
      adminId: row.admin_id,
      operation: row.operation,
      input: typeof row.input === 'string' ? (JSON.parse(row.input) as unknown) : row.input,
      outcome: row.outcome,
      ip: row.ip,
    })),
    total,
  };
}
