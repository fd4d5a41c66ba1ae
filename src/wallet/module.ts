import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { type WalletView, walletBalances } from './balances.ts';
import { listWalletTransactions, type WalletTransactionView } from './history.ts';
import { type MovementKindRule, movementKindOf } from './movement-kinds.ts';
import { walletOperations } from './ops.ts';

// The wallet: the caller's balances and the history of every movement of their wallet, read from
// the ledger. No jobs and no reactions to events; other domains move money through the ledger, not
// through this module. It imports no domain: what kind each movement is, the modules that make
// them say (their `movementKinds`), and the other person of a transfer, the transfers' api.

export type { MovementKindRule } from './movement-kinds.ts';
export type { MovementKind } from './schemas.ts';
export type { WalletTransactionView, WalletView };

/** What a module that moves a wallet's money gives besides its DomainModule: how the history tells its movements. */
export type MovesWallet = { movementKinds: readonly MovementKindRule[] };

/** Everything the wallet is given (createModules): the ledger it reads, and what other modules tell. */
export type WalletModuleDeps = {
  /** The database: the ledger's accounts and entries, which the balances and the history read. */
  db: Kysely<DB>;
  /**
   * Every module's `movementKinds`, in the order they are tried (the first rule that matches an
   * entry gives its kind).
   */
  movementKinds: readonly MovementKindRule[];
  /**
   * Transfers' api: the other person's public name, by posting reference, of those postings that are
   * the user's transfers.
   */
  counterpartiesOf: (
    userId: string,
    postingReferences: readonly string[],
  ) => Promise<ReadonlyMap<string, string>>;
};

/** What others may ask of the wallet: an operator's view of a person's (adminGetUser). */
export type WalletApi = {
  /**
   * A user's balances and their latest `movementsMax` wallet movements, newest first, exactly as the
   * person's own history gives them (listTransactions), and how many movements the wallet has in all.
   */
  walletOf(
    userId: string,
    movementsMax: number,
  ): Promise<{ balances: WalletView; movements: WalletTransactionView[]; movementsTotal: number }>;
};

export function createWalletModule(deps: WalletModuleDeps): DomainModule & { api: WalletApi } {
  const history = {
    db: deps.db,
    kindOf: movementKindOf(deps.movementKinds),
    counterpartiesOf: deps.counterpartiesOf,
  };
  return {
    ...emptyModule,
    operations: walletOperations({ db: deps.db, history }),
    api: {
      walletOf: async (userId, movementsMax) => {
        const [balances, { items, total }] = await Promise.all([
          walletBalances(deps.db, userId),
          listWalletTransactions(history, userId, { limit: movementsMax, offset: 0 }),
        ]);
        return { balances, movements: items, movementsTotal: total };
      },
    },
  };
}
