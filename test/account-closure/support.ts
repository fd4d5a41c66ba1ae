import assert from 'node:assert/strict';
import { newId } from '../../src/ids.ts';
import { systemAccounts, userAccount, userBalances } from '../../src/ledger/accounts.ts';
import { post as postLedger } from '../../src/ledger/postings.ts';
import { type ApiResponse, failure, get, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { PIN } from '../vtu/purchase-support.ts';

// Shared by the account-closure tests: the three operations, and money moved in and out of a
// person's accounts as a top-up, a held credit or a withdrawal would, so that each reason to refuse
// can be set up alone.

export type DeletionView = {
  pending: { requestedAt: string; effectiveAt: string } | null;
  reasons: string[];
};

export const requestDeletion = (world: World, user: SignedIn, pin = PIN) =>
  post<{ effectiveAt: string }>(world, 'requestAccountDeletion', { pin }, { token: user.accessToken });

export const cancelDeletion = (world: World, user: SignedIn) =>
  post<{ cancelledAt: string }>(world, 'cancelAccountDeletion', {}, { token: user.accessToken });

export const deletionOf = async (world: World, user: SignedIn) =>
  ok(await get<DeletionView>(world, 'getAccountDeletion', {}, { token: user.accessToken }));

/** The reasons of a 409 CONFLICT refusal. */
export function refusedWith(answer: ApiResponse, what: string): string[] {
  const error = failure(answer);
  assert.deepEqual([error.status, error.code], [409, 'CONFLICT'], `${what}: ${JSON.stringify(error)}`);
  return error.details?.reasons as string[];
}

/** Moves kobo between a system account and one of the person's (a credit when positive). */
async function move(world: World, account: string, kobo: bigint): Promise<void> {
  await postLedger(
    world.ctx.db,
    {
      reference: `test-closure:${newId()}`,
      description: 'Test movement',
      entries: [
        { account: systemAccounts.collectionsPool, amount: -kobo },
        { account, amount: kobo },
      ],
    },
    world.ctx.clock.now(),
  );
}

/** Credits the person's held balance, as a credit over their tier's maximum would (API.md 17.2). */
export const holdKobo = (world: World, userId: string, kobo: bigint) =>
  move(world, userAccount('wallet_held', userId), kobo);

/** Takes the whole wallet out (as a withdrawal would), so that a test's one reason stands alone. */
export async function emptyWallet(world: World, userId: string): Promise<void> {
  const { wallet } = await userBalances(world.ctx.db, userId);
  if (wallet > 0n) await move(world, userAccount('wallet', userId), -wallet);
}

/** Credits the wallet as a top-up would. */
export const creditKobo = (world: World, userId: string, kobo: bigint) =>
  move(world, userAccount('wallet', userId), kobo);
