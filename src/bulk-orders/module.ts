import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { everyRow } from '../paging.ts';
import type { VtuApi } from '../vtu/module.ts';
import { bulkOrderOperations } from './ops.ts';
import type { BulkOrderView } from './schemas.ts';
import { listBulkOrders } from './service.ts';

// Bulk orders (API.md section 16): airtime or data for up to 100 numbers, checked, priced and
// accepted together by the vtu module's api, each line then its own purchase. No jobs and no
// reactions to events: the lines' outcomes are the purchases' own, read when the order is read.

export type BulkOrdersModuleDeps = {
  /** Where an order and its lines are stored (service.ts). */
  db: Kysely<DB>;
  /** When an order was placed. */
  clock: Clock;
  /**
   * The purchases' api (the vtu module's): the buyer's Tier 1 and PIN checked once, the service not
   * paused by an operator, each line's order and charge, the lines accepted together, and their
   * purchases read when the order is read.
   */
  vtu: Pick<VtuApi, 'authorise' | 'requireOpen' | 'orderFor' | 'buyTogether' | 'purchasesOf' | 'chargeOf'>;
};

export type BulkOrdersApi = {
  /** Every bulk order of the person with its lines' statuses, newest first (their data export). */
  personalDataOf(userId: string): Promise<BulkOrderView[]>;
};

export function createBulkOrdersModule(deps: BulkOrdersModuleDeps): DomainModule & { api: BulkOrdersApi } {
  return {
    ...emptyModule,
    operations: bulkOrderOperations(deps),
    api: { personalDataOf: async (userId) => (await listBulkOrders(deps, userId, everyRow)).items },
  };
}
