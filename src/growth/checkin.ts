import { type Kysely, sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import { publishEvents } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { lagosDate, nextLagosMidnight } from '../lagos-time.ts';
import { balancesOf, lockedUserBalance, systemAccounts, userAccount } from '../ledger/accounts.ts';
import { postBatch } from '../ledger/postings.ts';
import { koboToNaira } from '../money.ts';

// The daily check-in (API.md section 9): one claim per Africa/Lagos calendar day of the service
// clock (the claims' primary key is the user and the day, so twenty claims at once make one), each
// accruing the reward from expense_rewards into the user's checkin_accrued account. The streak
// counts consecutive days and starts again at 1 after a day without a claim. withdrawCheckin moves
// all of the accrued money into the wallet once it reaches the minimum.

/** The ledger references of a day's reward (to the accrued account) and of a withdrawal to the wallet. */
export const checkinPostings = {
  claim: (userId: string, day: string) => `checkin:${userId}:${day}`,
  withdrawal: (id: string) => `checkin-withdraw:${id}`,
};

export type CheckinDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  config: Config['growth'];
};

export type CheckinStatus = {
  claimedToday: boolean;
  streak: number;
  accrued: number;
  reward: number;
  nextClaimAt: string;
};

/** The streak of the user's claims on `day` and on the day before it (0 where there was none). */
async function streaksAround(db: Kysely<DB>, userId: string, day: string) {
  const { rows } = await sql<{ today: number | null; yesterday: number | null }>`
    select
      (select streak from checkin_claims where user_id = ${userId} and day = ${day}::date) as today,
      (select streak from checkin_claims where user_id = ${userId} and day = ${day}::date - 1) as yesterday
  `.execute(db);
  return { today: rows[0]?.today ?? null, yesterday: rows[0]?.yesterday ?? null };
}

export async function checkinStatus(deps: CheckinDeps, userId: string): Promise<CheckinStatus> {
  const now = deps.clock.now();
  const { today, yesterday } = await streaksAround(deps.db, userId, lagosDate(now));
  const accrued = await balancesOf(deps.db, [userAccount('checkin_accrued', userId)]);
  return {
    claimedToday: today !== null,
    // Yesterday's streak is still alive until today ends without a claim.
    streak: today ?? yesterday ?? 0,
    accrued: koboToNaira(accrued.get(userAccount('checkin_accrued', userId)) ?? 0n),
    reward: koboToNaira(deps.config.checkinRewardKobo),
    nextClaimAt: (today === null ? now : nextLagosMidnight(now)).toISOString(),
  };
}

/** Claims today's check-in; a second claim the same Lagos day is 409 CONFLICT. */
export async function claimCheckin(
  deps: CheckinDeps,
  withCommit: WithCommit | undefined,
  userId: string,
): Promise<CheckinStatus> {
  const now = deps.clock.now();
  const day = lagosDate(now);
  const reward = deps.config.checkinRewardKobo;
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    // A concurrent claim of the same day waits on the primary key and then inserts nothing.
    const { rows } = await sql<{ streak: number }>`
      insert into checkin_claims (user_id, day, streak, reward, claimed_at)
      select ${userId}, ${day}::date,
        coalesce((select streak from checkin_claims where user_id = ${userId} and day = ${day}::date - 1), 0) + 1,
        ${reward}, ${now}
      on conflict do nothing
      returning streak`.execute(trx);
    const claimed = rows[0];
    if (claimed === undefined) throw new AppError('CONFLICT', "today's check-in is already claimed");
    const accrued = userAccount('checkin_accrued', userId);
    const [posted] = await postBatch(
      trx,
      [
        {
          reference: checkinPostings.claim(userId, day),
          description: `Daily check-in reward (${day})`,
          entries: [
            { account: systemAccounts.expenseRewards, amount: -reward },
            { account: accrued, amount: reward },
          ],
        },
      ],
      now,
      { referencesUnposted: true },
    );
    if (posted!.status === 'rejected') throw posted!.reason;
    await publishEvents(deps.jobs, trx, [
      {
        type: 'growth.checkin_claimed',
        userId,
        day,
        streak: claimed.streak,
        rewardKobo: reward.toString(),
        occurredAt: now.toISOString(),
      },
    ]);
    const balance = (await balancesOf(trx, [accrued])).get(accrued) ?? 0n;
    return {
      claimedToday: true,
      streak: claimed.streak,
      accrued: koboToNaira(balance),
      reward: koboToNaira(reward),
      nextClaimAt: nextLagosMidnight(now).toISOString(),
    };
  });
}

/** Moves all of the accrued check-in money into the wallet; under the minimum: 422 BELOW_MINIMUM. */
export async function withdrawCheckin(
  deps: CheckinDeps,
  withCommit: WithCommit | undefined,
  userId: string,
): Promise<{ withdrawn: number; balance: number }> {
  const now = deps.clock.now();
  const minimum = deps.config.checkinWithdrawMinKobo;
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const accruedAccount = userAccount('checkin_accrued', userId);
    const wallet = userAccount('wallet', userId);
    // Read under the lock the posting takes next (a user account, before the posting: the one order
    // holds), so that two withdrawals at once move the money once and the second finds nothing.
    const accrued = await lockedUserBalance(trx, accruedAccount);
    if (accrued < minimum) {
      throw new AppError(
        'BELOW_MINIMUM',
        `check-in rewards can be withdrawn from ₦${koboToNaira(minimum)}; ₦${koboToNaira(accrued)} accrued so far`,
        { details: { limit: koboToNaira(minimum) } },
      );
    }
    const [posted] = await postBatch(
      trx,
      [
        {
          reference: checkinPostings.withdrawal(newId()),
          description: 'Check-in rewards withdrawn',
          entries: [
            { account: accruedAccount, amount: -accrued },
            { account: wallet, amount: accrued },
          ],
        },
      ],
      now,
      { referencesUnposted: true },
    );
    if (posted!.status === 'rejected') throw posted!.reason;
    const balance = (await balancesOf(trx, [wallet])).get(wallet) ?? 0n;
    return { withdrawn: koboToNaira(accrued), balance: koboToNaira(balance) };
  });
}
