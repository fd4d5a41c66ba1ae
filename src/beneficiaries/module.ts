import { type DomainModule, emptyModule } from '../module.ts';
import { beneficiaryOperations } from './ops.ts';
import type { BeneficiaryDeps } from './service.ts';

// Beneficiaries (API.md section 16): the recipients a user saved, listed, saved and deleted. No jobs,
// no reactions to events, and nothing another domain calls.

export type BeneficiariesModuleDeps = BeneficiaryDeps;

export function createBeneficiariesModule(deps: BeneficiariesModuleDeps): DomainModule {
  return { ...emptyModule, operations: beneficiaryOperations(deps) };
}
