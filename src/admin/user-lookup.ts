import type { z } from 'zod';
import type { AuthApi } from '../auth/module.ts';
import { notFound } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import type { WalletApi } from '../wallet/module.ts';
import * as s from './schemas.ts';

// The operators' look-up of a person (issue 40: every incident without SQL): by id or by phone,
// the account's state (the freeze's reason included: the operator sees it, the person never does)
// and the wallet's latest movements. The person is auth's, the movements the wallet's: both are
// read through their modules' api, so this domain names neither's tables.

/** What the look-up reads, from the modules that own it. */
export type UserLookupDeps = {
  /** A user's row by id (auth's api). */
  findUserById: AuthApi['findUserById'];
  /** The user with this phone, in E.164 (auth's api). */
  findUserByPhone: AuthApi['findUserByPhone'];
  /** The roles a phone has (auth's api). */
  rolesOf: AuthApi['rolesOf'];
  /** The balances and latest movements of a user's wallet (the wallet's api). */
  walletOf: WalletApi['walletOf'];
};

/** The person an id or a phone names, with their wallet; 404 for nobody. */
export async function lookUpUser(
  deps: UserLookupDeps,
  by: { userId?: string | undefined; phone?: string | undefined },
): Promise<z.input<typeof s.operatorUserView>> {
  const user =
    by.userId !== undefined
      ? await deps.findUserById(by.userId)
      : by.phone !== undefined
        ? await deps.findUserByPhone(by.phone)
        : undefined;
  if (user === undefined) throw notFound('user');
  const { balances, movements, movementsTotal } = await deps.walletOf(user.id, s.lookupMovementsMax);
  return {
    id: user.id,
    phone: user.phone,
    firstName: user.first_name,
    lastName: user.last_name,
    email: user.email,
    kycTier: user.kyc_tier,
    roles: deps.rolesOf(user.phone),
    frozen: user.frozen_at !== null,
    frozenAt: user.frozen_at?.toISOString() ?? null,
    frozenReason: user.frozen_reason,
    frozenBy: user.frozen_by,
    createdAt: user.created_at.toISOString(),
    wallet: balances,
    movements,
    movementsTotal,
  };
}

export const userLookupOperations = (deps: UserLookupDeps) => [
  defineOperation({
    name: 'adminGetUser',
    method: 'GET',
    auth: 'admin',
    summary: 'Find a person by id or by phone: their account, its freeze, and what last moved their wallet',
    description: `Find a person by id or by phone: their account, its freeze, and what last moved their wallet. Give \`userId\` or \`phone\` (exactly one; the phone as people write it, 0803…, 234803… or +234803…, read as the sign-in reads it). The answer has their id, phone, names, KYC tier, roles, whether the account is frozen (since when, by whom and why: the reason is the operators’, never shown to the person), their balances, and the latest ${s.lookupMovementsMax} movements of their wallet, newest first, as their own history gives them. Nobody with that id or phone is 404; neither or both fields is 400`,
    tags: ['admin'],
    input: s.getUserInput,
    output: s.operatorUserView,
    errors: ['NOT_FOUND'],
    handler: ({ input }) => lookUpUser(deps, input),
  }),
];
