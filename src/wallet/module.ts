import { type DomainModule, emptyModule } from '../module.ts';
import { type WalletDeps, walletOperations } from './ops.ts';

// The wallet: the caller's balances, read from the ledger. No jobs and no reactions to events;
// other domains move money through the ledger, not through this module.

export type WalletModuleDeps = WalletDeps;

export function createWalletModule(deps: WalletModuleDeps): DomainModule {
  return { ...emptyModule, operations: walletOperations(deps) };
}
