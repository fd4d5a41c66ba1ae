import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { type BeneficiaryDeps, deleteBeneficiary, listBeneficiaries, saveBeneficiary } from './service.ts';

const tags = ['beneficiaries'];

/** The beneficiaries operations, closed over the module's deps. */
export const beneficiaryOperations = (deps: BeneficiaryDeps) => [
  defineOperation({
    name: 'listBeneficiaries',
    method: 'GET',
    auth: 'user',
    summary:
      'Your saved beneficiaries (numbers, meters, smartcards, betting accounts), most recently saved first',
    tags,
    input: s.listBeneficiariesInput,
    output: s.listBeneficiariesOutput,
    errors: [],
    handler: async ({ caller, input }) => ({
      items: await listBeneficiaries(deps.db, caller.userId, input.service),
    }),
  }),
  defineOperation({
    name: 'saveBeneficiary',
    method: 'POST',
    auth: 'user',
    summary: `Save a beneficiary: an upsert by service + recipient (label, network and details replaced). At most ${s.beneficiariesPerUserMax} per user: a new one beyond that is 422 ABOVE_MAXIMUM with details.limit (and details.unit "count")`,
    tags,
    input: s.saveBeneficiaryInput,
    output: s.beneficiary,
    errors: ['ABOVE_MAXIMUM'],
    handler: ({ caller, input, withCommit }) => saveBeneficiary(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'deleteBeneficiary',
    method: 'POST',
    auth: 'user',
    summary:
      'Delete one of your beneficiaries; an id that is not one of yours is 404 NOT_FOUND, which a client retrying the delete may take as done',
    tags,
    input: s.deleteBeneficiaryInput,
    output: s.deleteBeneficiaryOutput,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input, withCommit }) => deleteBeneficiary(deps, withCommit, caller.userId, input.id),
  }),
];
