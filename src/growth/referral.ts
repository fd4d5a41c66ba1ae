import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { publishEvents } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { balancesOf, systemAccounts, userAccount } from '../ledger/accounts.ts';
import { postBatch } from '../ledger/postings.ts';
import { koboToNaira } from '../money.ts';

// Referral (SPEC.md item 7, API.md section 9). A user who signs in the first time with another's
// referral code is that user's invitee (auth records it). When the invitee's Tier 1 is approved,
// the referrer's bonus_locked account grows by the bonus, once per invitee: the bonuses' primary key
// is the invitee, and the posting's reference names it too. The locked bonus is never spendable and
// never withdrawable: no operation moves it, the ledger refuses any posting that takes from a
// bonus_locked account, and the database refuses a balance of one going down.

export type ReferralDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  bonusKobo: bigint;
  /** Auth's api (growth/module.ts says what for). */
  users: Pick<AuthApi, 'findUserById' | 'inviteesOf' | 'referrerIdOf'>;
};

export type ReferralStatus = {
  referralCode: string;
  invitees: Array<{ name: string; joinedAt: string; qualified: boolean }>;
  lockedBonus: number;
};

/**
 * Grows the referrer's locked bonus for this invitee, once, whoever calls it and however often (the
 * domain event of a Tier 1 approval runs it, and a job may run twice or concurrently). Answers
 * whether this call granted it.
 */
export async function qualifyInvitee(deps: ReferralDeps, inviteeId: string): Promise<boolean> {
  const referrerId = await deps.users.referrerIdOf(inviteeId);
  if (referrerId === undefined) return false;
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const granted = await trx
      .insertInto('referral_bonuses')
      .values({ invitee_id: inviteeId, referrer_id: referrerId, amount: deps.bonusKobo, qualified_at: now })
      .onConflict((oc) => oc.column('invitee_id').doNothing())
      .returning('invitee_id')
      .executeTakeFirst();
    if (granted === undefined) return false;
    const [posted] = await postBatch(
      trx,
      [
        {
          reference: `referral-bonus:${inviteeId}`,
          description: 'Referral bonus (locked)',
          entries: [
            { account: systemAccounts.expenseRewards, amount: -deps.bonusKobo },
            { account: userAccount('bonus_locked', referrerId), amount: deps.bonusKobo },
          ],
          metadata: { inviteeId },
        },
      ],
      now,
    );
    if (posted!.status === 'rejected') throw posted!.reason;
    await publishEvents(deps.jobs, trx, [
      {
        type: 'growth.referral_qualified',
        userId: referrerId,
        inviteeId,
        bonusKobo: deps.bonusKobo.toString(),
        occurredAt: now.toISOString(),
      },
    ]);
    return true;
  });
}

export async function referralStatus(
  { db, users }: Pick<ReferralDeps, 'db' | 'users'>,
  userId: string,
): Promise<ReferralStatus> {
  const user = await users.findUserById(userId);
  const invitees = await users.inviteesOf(userId);
  const qualified = new Set(
    invitees.length === 0
      ? []
      : (
          await db
            .selectFrom('referral_bonuses')
            .select('invitee_id')
            .where('referrer_id', '=', userId)
            .execute()
        ).map((row) => row.invitee_id),
  );
  const bonus = userAccount('bonus_locked', userId);
  const balances = await balancesOf(db, [bonus]);
  return {
    referralCode: user?.referral_code ?? '',
    invitees: invitees.map((invitee) => ({
      name: invitee.name,
      joinedAt: invitee.joinedAt.toISOString(),
      qualified: qualified.has(invitee.id),
    })),
    lockedBonus: koboToNaira(balances.get(bonus) ?? 0n),
  };
}
