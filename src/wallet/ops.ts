import type { Kysely } from 'kysely';
import { z } from 'zod';
import { dateRangeOf } from '../date-filter.ts';
import type { DB } from '../db/schema.ts';
import { defineOperation } from '../operation.ts';
import { walletBalances } from './balances.ts';
import { getWalletTransaction, type HistoryDeps, listWalletTransactions } from './history.ts';
import * as s from './schemas.ts';

/** What the wallet's reads need: the balances are the ledger's, the history the ledger's and its kinds. */
export type WalletDeps = { db: Kysely<DB>; history: HistoryDeps };

/** The wallet operations, closed over the module's deps. */
export const walletOperations = (deps: WalletDeps) => [
  defineOperation({
    name: 'getWallet',
    method: 'GET',
    auth: 'user',
    summary: 'Balances of the caller (naira)',
    tags: ['wallet'],
    input: z.object({}).strict(),
    output: s.walletView,
    errors: [],
    handler: ({ caller }) => walletBalances(deps.db, caller.userId),
  }),
  // The history is the contract's section 6, under its tag: the wallet serves it, the contract files
  // it with funding.
  defineOperation({
    name: 'listTransactions',
    method: 'GET',
    auth: 'user',
    summary:
      'Your wallet history: every movement of the wallet (credits and debits), newest first, filtered by kind and date',
    tags: ['funding'],
    input: s.listTransactionsInput,
    output: s.listTransactionsOutput,
    errors: [],
    handler: ({ caller, input }) =>
      listWalletTransactions(
        deps.history,
        caller.userId,
        { limit: input.limit, offset: input.offset },
        { kind: input.kind, range: dateRangeOf(input) },
      ),
  }),
  defineOperation({
    name: 'getTransaction',
    method: 'POST',
    auth: 'user',
    summary: 'One entry of your wallet history',
    tags: ['funding'],
    input: s.getTransactionInput,
    output: s.walletTransaction,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) => getWalletTransaction(deps.history, caller.userId, input.id),
  }),
];
