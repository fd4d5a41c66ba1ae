import { type DomainModule, emptyModule } from '../module.ts';
import { disputeOperations } from './ops.ts';
import type { DisputeDeps } from './service.ts';

// Disputes (API.md section 16): a person reports a problem with a transaction they own, an operator
// resolves it with a refund (one posting, once) or a decline, and the person is told (the
// `disputes.resolved` event, which the notifications module turns into the inbox, email and push).
// It asks the purchases about a disputed purchase through their api (purchaseRecord), never their
// tables. No jobs, and nothing another domain calls.

export type DisputesModuleDeps = DisputeDeps;

export function createDisputesModule(deps: DisputesModuleDeps): DomainModule {
  return { ...emptyModule, operations: disputeOperations(deps) };
}
