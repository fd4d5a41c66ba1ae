import { type DomainModule, emptyModule } from '../module.ts';
import { type AdminDeps, adminOperations } from './ops.ts';

// The administrators' operations that belong to no other domain: the ledger check, reconciling now,
// and the VTU markups and price levels. The work is the other domains' own, reached through the deps
// (ops.ts).

export type AdminModuleDeps = AdminDeps;

export function createAdminModule(deps: AdminModuleDeps): DomainModule {
  return { ...emptyModule, operations: adminOperations(deps) };
}
