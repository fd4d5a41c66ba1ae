import type { TransferView } from '../../src/transfers/service.ts';
import { ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { fund, PIN } from '../vtu/purchase-support.ts';

// Shared by the transfer tests: senders (Tier 2, a PIN, a funded wallet), recipients, and the calls.

/** A signed-in user at `tier` with the test PIN and `walletNaira` in the wallet. */
export async function member(world: World, tier: 0 | 1 | 2, walletNaira = 0): Promise<SignedIn> {
  const user = await userAtTier(world, tier);
  ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
  if (walletNaira > 0) await fund(world, user.userId, walletNaira);
  return user;
}

export function transferCall(
  world: World,
  from: SignedIn,
  to: { phone: string },
  amount: number,
  extra: Record<string, unknown> = {},
) {
  return post<TransferView>(
    world,
    'transferToUser',
    { phone: to.phone, amount, pin: PIN, ...extra },
    { token: from.accessToken },
  );
}
