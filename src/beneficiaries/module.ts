import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { beneficiaryOperations } from './ops.ts';

// Beneficiaries (API.md section 16): the recipients a user saved, listed, saved and deleted. No jobs,
// no reactions to events, and nothing another domain calls.

export type BeneficiariesModuleDeps = {
  /** Where a user's beneficiaries are stored (service.ts). */
  db: Kysely<DB>;
  /** When a beneficiary was saved. */
  clock: Clock;
};

export function createBeneficiariesModule(deps: BeneficiariesModuleDeps): DomainModule {
  return { ...emptyModule, operations: beneficiaryOperations(deps) };
}
