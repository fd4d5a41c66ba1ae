import assert from 'node:assert/strict';
import { checkLedger } from '../../src/ledger/check.ts';
import type { ScheduleView } from '../../src/schedules/schemas.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { advanceClock } from '../auth/support.ts';
import { walletKobo } from '../funding/support.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { get, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { mtn, PIN } from '../vtu/purchase-support.ts';

// Shared by the schedule tests: the schedule calls, the session kept fresh across days of the sandbox
// clock (an access token lives 15 minutes), and what a person would look at afterwards.

export const createCall = (world: World, user: SignedIn, input: Record<string, unknown>) =>
  post<ScheduleView>(world, 'createSchedule', { pin: PIN, ...input }, { token: user.accessToken });

export const create = async (world: World, user: SignedIn, input: Record<string, unknown>) =>
  ok(await createCall(world, user, input));

export const action = (world: World, user: SignedIn, name: string, id: string) =>
  post<ScheduleView>(world, name, { id }, { token: user.accessToken });

export async function schedulesOf(world: World, user: SignedIn): Promise<ScheduleView[]> {
  return ok(
    await get<{ items: ScheduleView[] }>(world, 'listSchedules', { limit: 100 }, { token: user.accessToken }),
  ).items;
}

export async function scheduleOf(world: World, user: SignedIn, id: string): Promise<ScheduleView> {
  const found = (await schedulesOf(world, user)).find((one) => one.id === id);
  assert.ok(found !== undefined, `schedule ${id} is listed`);
  return found;
}

/** A new access token from the refresh token, as the client does when its token expired. */
export async function refreshed(world: World, user: SignedIn): Promise<SignedIn> {
  const tokens = ok(
    await post<{ accessToken: string; refreshToken: string }>(world, 'refreshSession', {
      refreshToken: user.refreshToken,
    }),
  );
  return { ...user, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken };
}

export async function purchasesOf(world: World, user: SignedIn): Promise<VtuTransactionView[]> {
  return ok(
    await get<{ items: VtuTransactionView[] }>(
      world,
      'listMyVtuTransactions',
      { limit: 100 },
      { token: user.accessToken },
    ),
  ).items;
}

export async function notificationsOf(
  world: World,
  user: SignedIn,
): Promise<Array<{ kind: string; title: string; body: string; data: Record<string, unknown> }>> {
  return ok(
    await get<{ items: Array<{ kind: string; title: string; body: string; data: Record<string, unknown> }> }>(
      world,
      'listNotifications',
      { limit: 100 },
      { token: user.accessToken },
    ),
  ).items;
}

/** Purchases still processing were sent from this process; wait for their sends to end. */
export async function sendsEnded(world: World, user: SignedIn): Promise<void> {
  const rows = await world.ctx.db
    .selectFrom('vtu_transactions')
    .select('id')
    .where('user_id', '=', user.userId)
    .execute();
  for (const row of rows) await world.ctx.modules.vtu.api.sendEnded(row.id);
}

export async function assertLedgerOk(world: World): Promise<void> {
  const check = await checkLedger(world.ctx.db);
  assert.ok(check.ok, `ledger check: ${JSON.stringify(check.imbalances)}`);
}

/** An ISO instant `seconds` from the service's clock now. */
export const fromNow = (world: World, seconds: number): string =>
  new Date(world.ctx.clock.now().getTime() + seconds * 1000).toISOString();

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A daily airtime schedule whose first run (two minutes on) comes while `stopBuying` holds (an
 * operator's freeze or pause): the run is skipped and the schedule stays active, the skip not
 * counted toward pausing it, due again a day later; nothing is debited or recorded, and the person
 * is told once. Answers the person signed in again past the run, the schedule and what they were
 * told, whose reason the caller checks.
 */
export async function skippedDailyRun(
  world: World,
  user: SignedIn,
  stopBuying: () => Promise<unknown>,
): Promise<{
  user: SignedIn;
  schedule: ScheduleView;
  told: Awaited<ReturnType<typeof notificationsOf>>[number];
}> {
  const made = await create(world, user, {
    service: 'airtime',
    order: { network: 'mtn', phone: mtn('5'), amount: 100 },
    startAt: fromNow(world, 120),
    every: 'day',
  });
  await stopBuying();
  const before = await walletKobo(world, user.userId);
  await advanceClock(world, 300);
  const later = await refreshed(world, user);
  const skipped = await scheduleOf(world, later, made.id);
  assert.deepEqual(
    [skipped.status, skipped.runs, skipped.skipsInRow],
    ['active', 0, 0],
    'still active, the skip not counted toward pausing it',
  );
  assert.equal(Date.parse(skipped.nextRunAt) - Date.parse(made.nextRunAt), DAY_MS, 'due again tomorrow');
  assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
  assert.equal((await purchasesOf(world, later)).length, 0, 'nothing recorded');
  await runDomainEvents(world);
  const told = (await notificationsOf(world, later)).filter((n) => n.kind === 'schedule_skipped');
  assert.equal(told.length, 1, 'told once');
  return { user: later, schedule: made, told: told[0]! };
}
