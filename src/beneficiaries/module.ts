import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { deleteBeneficiariesOf } from './account-closure.ts';
import { beneficiaryOperations } from './ops.ts';
import type { BeneficiaryView } from './schemas.ts';
import { listBeneficiaries } from './service.ts';

// Beneficiaries (API.md section 16): the recipients a user saved, listed, saved and deleted. No jobs
// and no reactions to events; a closing account deletes the person's, and the data export reads
// them, through the api.

export type BeneficiariesModuleDeps = {
  /** Where a user's beneficiaries are stored (service.ts). */
  db: Kysely<DB>;
  /** When a beneficiary was saved. */
  clock: Clock;
};

export type BeneficiariesApi = {
  /** Every beneficiary the person saved, as listBeneficiaries gives them (their data export). */
  personalDataOf(userId: string): Promise<BeneficiaryView[]>;
  /** Deletes every beneficiary of the person, in the closing account's transaction. */
  deleteBeneficiariesOf: typeof deleteBeneficiariesOf;
};

export function createBeneficiariesModule(
  deps: BeneficiariesModuleDeps,
): DomainModule & { api: BeneficiariesApi } {
  return {
    ...emptyModule,
    operations: beneficiaryOperations(deps),
    api: { personalDataOf: (userId) => listBeneficiaries(deps.db, userId, undefined), deleteBeneficiariesOf },
  };
}
