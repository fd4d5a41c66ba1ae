import type { DomainModule } from '../module.ts';
import { transferOperations } from './ops.ts';
import type { TransferDeps } from './service.ts';

// Wallet-to-wallet transfers (SPEC.md "Authentication" 4, API.md section 14): the recipient's
// name before sending, and the transfer itself, one posting across both wallets.

export type TransfersModuleDeps = TransferDeps;

export function createTransfersModule(deps: TransfersModuleDeps): DomainModule {
  return { operations: transferOperations(deps), jobs: [], subscribers: [] };
}
