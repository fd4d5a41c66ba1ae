import assert from 'node:assert/strict';
import { newId } from '../../src/ids.ts';
import { systemAccounts, userAccount } from '../../src/ledger/accounts.ts';
import { post as postLedger } from '../../src/ledger/postings.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';

// Shared by the purchase tests: a buyer (Tier 1, a PIN, a funded wallet), the purchase calls, and a
// wait for the accepting process's own dispatch (no sleeping: the promise ends when it does).

export const PIN = '2580';

/** An MTN number (0803…) ending in the given digit: the sandbox's answer (API.md section 8). */
export const mtn = (last: string) => `0803${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}${last}`;

export type Buyer = SignedIn;

/** A signed-in user at `tier` (1 unless said) with a PIN and `walletNaira` in the wallet. */
export async function buyer(world: World, walletNaira: number, tier: 1 | 2 = 1): Promise<Buyer> {
  const user = await userAtTier(world, tier);
  ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
  if (walletNaira > 0) await fund(world, user.userId, walletNaira);
  return user;
}

/** Credits the wallet as a verified top-up would (collections pool → wallet). */
export async function fund(world: World, userId: string, naira: number): Promise<void> {
  await postLedger(
    world.ctx.db,
    {
      reference: `test-funding:${newId()}`,
      description: 'Test funding',
      entries: [
        { account: systemAccounts.collectionsPool, amount: -BigInt(naira * 100) },
        { account: userAccount('wallet', userId), amount: BigInt(naira * 100) },
      ],
    },
    world.ctx.clock.now(),
  );
}

export function buyCall(world: World, user: Buyer, operation: string, input: Record<string, unknown>) {
  return post<VtuTransactionView>(world, operation, { pin: PIN, ...input }, { token: user.accessToken });
}

/** Buys, expects acceptance (processing), waits for this process's dispatch, returns the purchase now. */
export async function bought(
  world: World,
  user: Buyer,
  operation: string,
  input: Record<string, unknown>,
): Promise<VtuTransactionView> {
  const accepted = ok(await buyCall(world, user, operation, input));
  assert.equal(accepted.status, 'processing', 'a purchase is accepted as processing');
  await world.ctx.modules.vtu.api.sendEnded(accepted.id);
  return current(world, user, accepted.id);
}

export async function current(world: World, user: Buyer, id: string): Promise<VtuTransactionView> {
  return ok(
    await post<VtuTransactionView>(world, 'getMyVtuTransaction', { id }, { token: user.accessToken }),
  );
}

/** Moves the sandbox clock, which runs the time-driven jobs (the requery among them) before answering. */
export { advanceClock } from '../auth/support.ts';

/** How many purchases the user has on record, whatever their status. */
export async function recordedPurchases(world: World, userId: string): Promise<number> {
  const rows = await world.ctx.db
    .selectFrom('vtu_transactions')
    .select('id')
    .where('user_id', '=', userId)
    .execute();
  return rows.length;
}
