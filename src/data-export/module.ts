import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import type { ExportSources } from './export-file.ts';
import { dataExportOperations } from './ops.ts';
import { purgeExpiredDataExports } from './retention.ts';
import {
  buildDataExport,
  dataExportBuildJob,
  dataExportSweepJob,
  downloadDataExport,
  sweepDataExports,
} from './service.ts';

// The data export (API.md 17.3, decision 0046): a person's copy of everything billrail keeps about
// them, one JSON file built by a job from every domain's api, kept 7 days in its one table
// (data_exports) behind a URL signed for at most 10 minutes, then deleted by the sweep. The file's
// route (http/data-export-route.ts) serves it through `api.download`.

/** Where the copies are served: the signed download URLs start with it (http/data-export-route.ts). */
export { EXPORT_PATH } from './service.ts';
export type { ExportSources };

export type DataExportModuleDeps = {
  /** Its table, data_exports: the requests, and the file while it is kept. */
  db: Kysely<DB>;
  /** When a request is made, a file built and deleted, and a URL's expiry. */
  clock: Clock;
  /** The build job enqueued with the request, and the ready event, in their transactions. */
  jobs: JobQueue;
  /** The service's public base URL: the download URL starts with it. */
  baseUrl: string;
  /** The HMAC key of the download URLs (signedUrlKey of the pepper, "data-export-url"). */
  urlKey: Buffer;
  /** Auth's api: the person's row locked, so that two requests at once make one export. */
  lockUser: AuthApi['lockUser'];
  /**
   * The file's sections, each from its domain's api: the profile (auth), KYC, the wallet's balances
   * and movements (transfers named by the masked name the person saw), purchases, savings, rewards,
   * notifications, beneficiaries, schedules, bulk orders, disputes and devices (push).
   */
  sources: ExportSources;
};

export type DataExportApi = {
  /**
   * The file behind a signed download URL, as JSON text: 403 FORBIDDEN for a forged or expired
   * signature, 404 NOT_FOUND once the file is deleted (the route's answer).
   */
  download(link: {
    id: string;
    expires: string;
    signature: string;
  }): Promise<{ json: string; readyAt: Date }>;
  /** Retention (decision 0054): one batch of the exports whose link expired before `before`. */
  purgeExpiredDataExports(before: Date, batchMax: number): Promise<number>;
};

export function createDataExportModule(deps: DataExportModuleDeps): DomainModule & { api: DataExportApi } {
  return {
    operations: dataExportOperations(deps),
    jobs: [
      jobDefinition(dataExportBuildJob, {
        // One export's file (service.ts), enqueued with its request. Safe to run twice: an export
        // already built is left as it is.
        retryLimit: 5,
        retryDelaySeconds: 30,
        expireInSeconds: 300,
        handler: ({ exportId }) => buildDataExport(deps, exportId),
      }),
      jobDefinition(dataExportSweepJob, {
        // The files past their 7 days deleted (the rows stay, expired): every 15 minutes, and when
        // the sandbox's clock moves. getDataExport and the download already refuse a file past its
        // time, so the sweep's delay never serves one late.
        cron: '*/15 * * * *',
        retryLimit: 2,
        retryDelaySeconds: 60,
        expireInSeconds: 300,
        runOnClockAdvance: true,
        handler: async () => {
          await sweepDataExports(deps);
        },
      }),
    ],
    subscribers: [],
    api: {
      download: (link) => downloadDataExport(deps, link),
      purgeExpiredDataExports: (before, batchMax) => purgeExpiredDataExports(deps.db, before, batchMax),
    },
  };
}
