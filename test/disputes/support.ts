import assert from 'node:assert/strict';
import type { AdminDisputeView, DisputeView } from '../../src/disputes/schemas.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { get, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { type Buyer, bought, mtn } from '../vtu/purchase-support.ts';

// Shared by the dispute tests: the calls a person and an operator make, and a purchase to dispute.

export type DisputePage = { items: DisputeView[]; limit: number; offset: number; total: number };
export type AdminDisputePage = { items: AdminDisputeView[]; limit: number; offset: number; total: number };
export type WalletEntry = {
  id: string;
  reference: string;
  kind: string;
  direction: 'credit' | 'debit';
  amount: number;
  balanceAfter: number;
  purchaseId?: string;
};

export const report = (
  world: World,
  user: SignedIn,
  reference: string,
  extra: Record<string, unknown> = {},
  idempotencyKey?: string,
) =>
  post<DisputeView>(
    world,
    'reportProblem',
    { reference, reason: 'token_not_received', message: 'I was charged and nothing came', ...extra },
    { token: user.accessToken, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) },
  );

export const resolve = (
  world: World,
  admin: SignedIn,
  id: string,
  decision: 'refund' | 'decline',
  extra: Record<string, unknown> = {},
) =>
  post<DisputeView>(
    world,
    'adminResolveDispute',
    { id, decision, reason: 'Checked with the provider', ...extra },
    { token: admin.accessToken },
  );

export const myDisputes = async (world: World, user: SignedIn, query: Record<string, unknown> = {}) =>
  ok(await get<DisputePage>(world, 'listMyDisputes', query, { token: user.accessToken }));

export const adminDisputes = async (world: World, admin: SignedIn, query: Record<string, unknown> = {}) =>
  ok(
    await get<AdminDisputePage>(
      world,
      'adminListDisputes',
      { limit: 100, ...query },
      { token: admin.accessToken },
    ),
  );

export const walletHistory = async (world: World, user: SignedIn, query: Record<string, unknown> = {}) =>
  ok(
    await get<{ items: WalletEntry[]; total: number }>(world, 'listTransactions', query, {
      token: user.accessToken,
    }),
  ).items;

export const balance = async (world: World, user: SignedIn): Promise<number> =>
  ok(await get<{ balance: number }>(world, 'getWallet', {}, { token: user.accessToken })).balance;

/** ₦`amount` of MTN airtime bought, settled with the sandbox's outcome for the number's last digit. */
export async function airtime(
  world: World,
  user: Buyer,
  lastDigit: string,
  amount = 500,
): Promise<VtuTransactionView> {
  const purchase = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn(lastDigit), amount });
  assert.ok(purchase.amount > 0);
  return purchase;
}
