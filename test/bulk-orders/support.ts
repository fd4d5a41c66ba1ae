import { randomUUID } from 'node:crypto';
import type { BulkOrderView, BulkPreview } from '../../src/bulk-orders/schemas.ts';
import { userAccount } from '../../src/ledger/accounts.ts';
import { type ApiResponse, ok, post, type World } from '../helpers/world.ts';
import { type Buyer, mtn, PIN } from '../vtu/purchase-support.ts';

// Shared by the bulk-order tests: lines of airtime whose sandbox outcome is chosen by the number's
// last digit (API.md section 8), the order's calls, and reads of the wallet and the order's rows.

export type Line = { network: string; phone: string; amount: number; plan_id?: string };

/** `count` MTN airtime lines: line i ends in digit i % 10 and buys 50 × (1 + i % 4) naira. */
export const airtimeLines = (count: number): Line[] =>
  Array.from({ length: count }, (_, i) => ({
    network: 'mtn',
    phone: mtn(String(i % 10)),
    amount: 50 * (1 + (i % 4)),
  }));

/** Kobo of the lines whose number ends in one of the digits (airtime is sold at its face value). */
export const koboOf = (lines: Line[], digits: string) =>
  lines
    .filter((line) => digits.includes(line.phone.at(-1)!))
    .reduce((sum, line) => sum + BigInt(line.amount * 100), 0n);

export const preview = (world: World, user: Buyer, service: string, lines: Line[]) =>
  post<BulkPreview>(world, 'previewBulkOrder', { service, lines }, { token: user.accessToken });

export function order(
  world: World,
  user: Buyer,
  input: { service?: string; lines: Line[]; total: number; pin?: string },
  idempotencyKey: string = randomUUID(),
): Promise<ApiResponse<BulkOrderView>> {
  return post<BulkOrderView>(
    world,
    'createBulkOrder',
    { service: 'airtime', pin: PIN, ...input },
    { token: user.accessToken, idempotencyKey },
  );
}

export const fetchOrder = async (world: World, user: Buyer, id: string) =>
  ok(await post<BulkOrderView>(world, 'getBulkOrder', { id }, { token: user.accessToken }));

/** Resolves when this process's sends of every line of the order have ended. */
export async function linesSent(world: World, placed: BulkOrderView): Promise<void> {
  await Promise.all(placed.lines.map((line) => world.ctx.modules.vtu.api.sendEnded(line.transactionId!)));
}

export async function walletKobo(world: World, userId: string): Promise<bigint> {
  const row = await world.ctx.db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('code', '=', userAccount('wallet', userId))
    .executeTakeFirstOrThrow();
  return BigInt(row.balance);
}

export async function ordersOnRecord(world: World, userId: string): Promise<number> {
  const rows = await world.ctx.db
    .selectFrom('bulk_orders')
    .select('id')
    .where('user_id', '=', userId)
    .execute();
  return rows.length;
}
