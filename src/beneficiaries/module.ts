import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { deleteBeneficiariesOf } from './account-closure.ts';
import { beneficiaryOperations } from './ops.ts';

// Beneficiaries (API.md section 16): the recipients a user saved, listed, saved and deleted. No jobs
// and no reactions to events; a closing account deletes the person's through the api.

export type BeneficiariesModuleDeps = {
  /** Where a user's beneficiaries are stored (service.ts). */
  db: Kysely<DB>;
  /** When a beneficiary was saved. */
  clock: Clock;
};

export type BeneficiariesApi = {
  /** Deletes every beneficiary of the person, in the closing account's transaction. */
  deleteBeneficiariesOf: typeof deleteBeneficiariesOf;
};

export function createBeneficiariesModule(
  deps: BeneficiariesModuleDeps,
): DomainModule & { api: BeneficiariesApi } {
  return { ...emptyModule, operations: beneficiaryOperations(deps), api: { deleteBeneficiariesOf } };
}
