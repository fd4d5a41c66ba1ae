import { type DomainModule, emptyModule } from '../module.ts';
import { bulkOrderOperations } from './ops.ts';
import type { BulkOrderDeps } from './service.ts';

// Bulk orders (API.md section 16): airtime or data for up to 100 numbers, checked, priced and
// accepted together by the vtu module's api, each line then its own purchase. No jobs and no
// reactions to events: the lines' outcomes are the purchases' own, read when the order is read.

export type BulkOrdersModuleDeps = BulkOrderDeps;

export function createBulkOrdersModule(deps: BulkOrdersModuleDeps): DomainModule {
  return { ...emptyModule, operations: bulkOrderOperations(deps) };
}
