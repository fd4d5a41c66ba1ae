import { userBalances } from '../../src/ledger/accounts.ts';
import type { SavingsLockView } from '../../src/savings/service.ts';
import { ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { fund } from '../vtu/purchase-support.ts';

// Shared by the savings and growth tests: a saver (signed in, wallet funded) and the lock calls.

/** A signed-in user with `walletNaira` in the wallet (savings need no KYC tier and no PIN). */
export async function saver(world: World, walletNaira: number): Promise<SignedIn> {
  const user = await signIn(world);
  if (walletNaira > 0) await fund(world, user.userId, walletNaira);
  return user;
}

export const lockCall = (world: World, user: SignedIn, amount: number, days = 30) =>
  post<SavingsLockView>(world, 'createSavingsLock', { amount, days }, { token: user.accessToken });

export const lock = async (world: World, user: SignedIn, amount: number, days = 30) =>
  ok(await lockCall(world, user, amount, days));

export const breakCall = (world: World, user: SignedIn, lockId: string) =>
  post<{ lock: SavingsLockView; refunded: number; penalty: number }>(
    world,
    'breakSavingsLock',
    { lockId },
    { token: user.accessToken },
  );

/** The user's four ledger balances, in kobo. */
export const balancesOf = (world: World, user: SignedIn) => userBalances(world.ctx.db, user.userId);

/** A system account's balance in kobo. */
export async function systemBalance(world: World, code: string): Promise<bigint> {
  const row = await world.ctx.db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  return row.balance;
}
