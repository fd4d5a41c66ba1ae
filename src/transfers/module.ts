import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { KycModule } from '../kyc/module.ts';
import type { LimitsApi } from '../limits/module.ts';
import type { DomainModule } from '../module.ts';
import type { MovesWallet } from '../wallet/module.ts';
import { transferOperations } from './ops.ts';
import { transferCounterparties, walletTransferPostingReference } from './service.ts';

// Wallet-to-wallet transfers (SPEC.md "Authentication" 4, API.md section 14): the recipient's
// name before sending, and the transfer itself, one posting across both wallets.

/**
 * Everything the transfers are given (createModules). The service's functions take the part they
 * need (TransferDeps in service.ts), which the compiler checks these satisfy.
 */
export type TransfersModuleDeps = {
  /** The database: this module's table (wallet_transfers) and the ledger's posting across both wallets. */
  db: Kysely<DB>;
  /** The service clock: a transfer's time and the Africa/Lagos day its daily total counts. */
  clock: Clock;
  /** The job queue the transfer's domain event is published through, in its transaction. */
  jobs: JobQueue;
  /** The transfers' bounds, in kobo: one transfer's least and most, and a sender's most in a day. */
  config: Config['transfers'];
  /**
   * Auth's api: the sender and the recipient (by phone), the other people of the wallet history's
   * transfers, the name each sees of the other, and whether the sender is frozen (under its lock).
   */
  users: Pick<AuthApi, 'findUserById' | 'findUserByPhone' | 'findUsersByIds' | 'publicName' | 'frozenAmong'>;
  /** Auth's api: the sender's transaction PIN, checked before the recipient is looked up. */
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
  /** Kyc's api: the sender's Tier 2 gate, on the tier read with the sender's row. */
  requireTier: KycModule['api']['requireTier'];
  /**
   * Limits' api (API.md 17.2): the sender's daily debit limit, judged under the posting's lock, and
   * the recipient's maximum balance, whose excess is held and the recipient told.
   */
  limits: Pick<LimitsApi, 'splitCredits' | 'creditEntries' | 'announceHeld' | 'dailyDebitAdmission'>;
};

export type TransfersApi = {
  /** The other person's public name, by posting reference, of those postings that are the user's transfers. */
  counterpartiesOf(
    userId: string,
    postingReferences: readonly string[],
  ): Promise<ReadonlyMap<string, string>>;
};

export type TransfersModule = DomainModule & MovesWallet & { api: TransfersApi };

export function createTransfersModule(deps: TransfersModuleDeps): TransfersModule {
  return {
    operations: transferOperations(deps),
    jobs: [],
    subscribers: [],
    // One posting moves a transfer: out of one wallet, into the other.
    movementKinds: [
      { kind: 'transfer_in', reference: walletTransferPostingReference, direction: 'credit' },
      { kind: 'transfer_out', reference: walletTransferPostingReference, direction: 'debit' },
    ],
    api: { counterpartiesOf: (userId, references) => transferCounterparties(deps, userId, references) },
  };
}
