import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { SIGNED_URL_TTL_SECONDS_MAX, signUrl, verifyUrlSignature } from '../shared/signed-urls.ts';
import { type ExportSources, exportFileOf } from './export-file.ts';
import type { DataExportView } from './schemas.ts';

// A person's copy of their data (API.md 17.3, decision 0046). Asked for once a day; built by a job
// into one JSON document kept in data_exports for 7 days; served behind a URL signed for at most 10
// minutes; then emptied by the sweep. The person is told when it is ready (data_export.ready).

/** One request per person in this long (API.md 17.3). */
export const EXPORT_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** How long a ready file is kept (API.md 17.3). */
export const EXPORT_KEPT_MS = 7 * 24 * 60 * 60 * 1000;
/** The download URL's life: the most a signed URL of the service may live (10 minutes). */
export const EXPORT_URL_TTL_SECONDS = SIGNED_URL_TTL_SECONDS_MAX;
/** Where the files are served (http/data-export-route.ts). */
export const EXPORT_PATH = '/data-exports';

/** Builds one export's file (enqueued with the request, in its transaction). */
export const dataExportBuildJob = defineJob('data-export.build', z.object({ exportId: z.uuid() }));
/** Deletes the files past their 7 days. */
export const dataExportSweepJob = defineJob('data-export.sweep', noPayload);

/** What the service's functions take: the module's deps (module.ts says what each is for). */
export type DataExportDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  baseUrl: string;
  urlKey: Buffer;
  lockUser: AuthApi['lockUser'];
  sources: ExportSources;
};

/**
 * Records a request and enqueues its build, in one transaction under the person's row lock, so that
 * two requests at once make one export: the second finds the first and is 409 CONFLICT, saying when
 * the next may be asked for.
 */
export async function requestDataExport(
  deps: Pick<DataExportDeps, 'db' | 'clock' | 'jobs' | 'lockUser'>,
  withCommit: WithCommit | undefined,
  userId: string,
): Promise<{ id: string; status: 'preparing' }> {
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    await deps.lockUser(trx, userId);
    const now = deps.clock.now();
    const latest = await trx
      .selectFrom('data_exports')
      .select(['id', 'created_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (latest !== undefined && now.getTime() - latest.created_at.getTime() < EXPORT_INTERVAL_MS) {
      const nextAllowedAt = new Date(latest.created_at.getTime() + EXPORT_INTERVAL_MS).toISOString();
      throw new AppError(
        'CONFLICT',
        `a copy of your data can be asked for once a day: the next from ${nextAllowedAt}`,
        // The copy already asked for: a phone that does not know it (another device, a new session)
        // finds it by this, and shows it.
        { details: { reason: 'export_requested_recently', nextAllowedAt, exportId: latest.id } },
      );
    }
    const id = newId();
    await trx
      .insertInto('data_exports')
      .values({ id, user_id: userId, status: 'preparing', created_at: now })
      .execute();
    await deps.jobs.send(dataExportBuildJob, { exportId: id }, { db: trx });
    return { id, status: 'preparing' as const };
  });
}

/** One of the person's exports; another person's id is 404. A ready one comes with a fresh signed URL. */
export async function getDataExport(
  deps: Pick<DataExportDeps, 'db' | 'clock' | 'baseUrl' | 'urlKey'>,
  userId: string,
  id: string,
): Promise<DataExportView> {
  const row = await deps.db
    .selectFrom('data_exports')
    .select(['id', 'status', 'expires_at'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) throw notFound('data export');
  if (row.status === 'preparing') return { id: row.id, status: 'preparing' };
  const now = deps.clock.now();
  // Past its 7 days it is expired even before the sweep has emptied it.
  if (row.status === 'expired' || row.expires_at === null || row.expires_at <= now) {
    return { id: row.id, status: 'expired' };
  }
  const urlExpiresMs = Math.min(now.getTime() + EXPORT_URL_TTL_SECONDS * 1000, row.expires_at.getTime());
  return {
    id: row.id,
    status: 'ready',
    url: signUrl({
      baseUrl: deps.baseUrl,
      path: EXPORT_PATH,
      id: row.id,
      expiresAt: new Date(urlExpiresMs),
      key: deps.urlKey,
    }),
    expiresAt: row.expires_at.toISOString(),
  };
}

/**
 * Builds the file of a preparing export, then marks it ready and tells the person, in one
 * transaction. Safe to run twice: an export already built is left as it is.
 */
export async function buildDataExport(deps: DataExportDeps, exportId: string): Promise<void> {
  const row = await deps.db
    .selectFrom('data_exports')
    .select(['user_id', 'status'])
    .where('id', '=', exportId)
    .executeTakeFirst();
  if (row === undefined || row.status !== 'preparing') return;
  // Read outside the transaction (each domain through its api): what the file holds is what was
  // there when it was built.
  const now = deps.clock.now();
  const file = (await exportFileOf(deps.sources, row.user_id, now)) ?? {};
  const expiresAt = new Date(now.getTime() + EXPORT_KEPT_MS);
  await deps.db.transaction().execute(async (trx) => {
    const built = await trx
      .updateTable('data_exports')
      .set({
        status: 'ready',
        content: Buffer.from(`${JSON.stringify(file, null, 2)}\n`),
        ready_at: now,
        expires_at: expiresAt,
      })
      .where('id', '=', exportId)
      .where('status', '=', 'preparing')
      .returning('id')
      .executeTakeFirst();
    if (built === undefined) return;
    await publishEvent(deps.jobs, trx, {
      type: 'data_export.ready',
      userId: row.user_id,
      exportId,
      expiresAt: expiresAt.toISOString(),
      occurredAt: now.toISOString(),
    });
  });
}

/** Deletes the files past their 7 days (the rows stay, expired). Answers how many. */
export async function sweepDataExports(deps: Pick<DataExportDeps, 'db' | 'clock'>): Promise<number> {
  const swept = await deps.db
    .updateTable('data_exports')
    .set({ status: 'expired', content: null })
    .where('status', '=', 'ready')
    .where('expires_at', '<=', deps.clock.now())
    .executeTakeFirst();
  return Number(swept.numUpdatedRows);
}

/**
 * The file behind a signed URL, as JSON text. The signature is the only credential (a browser opens
 * the link without a bearer token), so it is checked before anything is looked up: 403 FORBIDDEN for
 * a forged or expired one, then 404 NOT_FOUND when the file is gone.
 */
export async function downloadDataExport(
  deps: Pick<DataExportDeps, 'db' | 'clock' | 'urlKey'>,
  link: { id: string; expires: string; signature: string },
): Promise<{ json: string; readyAt: Date }> {
  const now = deps.clock.now();
  const verdict = verifyUrlSignature({ ...link, key: deps.urlKey, now, ttlSeconds: EXPORT_URL_TTL_SECONDS });
  if (verdict !== 'ok') throw new AppError('FORBIDDEN', 'this download link is invalid or has expired');
  const row = await deps.db
    .selectFrom('data_exports')
    .select(['content', 'ready_at'])
    .where('id', '=', link.id)
    .where('status', '=', 'ready')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (row === undefined || row.content === null || row.ready_at === null) throw notFound('data export');
  return { json: Buffer.from(row.content).toString('utf8'), readyAt: row.ready_at };
}
