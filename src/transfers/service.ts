import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AuthApi, UserRow } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, accountFrozen, notFound } from '../errors.ts';
import { publishEvents } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { KycModule } from '../kyc/module.ts';
import { lagosDayStart, lagosMinute } from '../lagos-time.ts';
import { userAccount } from '../ledger/accounts.ts';
import { InsufficientBalanceError, postBatch } from '../ledger/postings.ts';
import type { LimitsApi } from '../limits/module.ts';
import { requireWithin } from '../limits.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';

// Wallet-to-wallet transfers (SPEC.md "Authentication" 4, API.md section 14): Tier 2 for the
// sender, at least Tier 1 for the recipient. A transfer is one posting that debits the sender's
// wallet and credits the recipient's, in the transaction that records it, counts it in the sender's
// daily total and tells the recipient; so both wallet histories show it the moment it commits.
//
// Locks: the posting locks both wallets in the ledger's one order (by account code), whichever way
// the money goes, so transfers A→B and B→A at once wait for each other instead of deadlocking. The
// daily total is read under those locks (the posting's admission), so two transfers of one sender
// are counted one after the other, in any process.

export type TransferDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  config: Config['transfers'];
  // From other modules' api (transfers/module.ts says what each is for).
  users: Pick<AuthApi, 'findUserById' | 'findUserByPhone' | 'findUsersByIds' | 'publicName' | 'frozenAmong'>;
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
  requireTier: KycModule['api']['requireTier'];
  limits: Pick<LimitsApi, 'splitCredits' | 'creditEntries' | 'announceHeld' | 'dailyDebitAdmission'>;
};

export type TransferView = {
  id: string;
  reference: string;
  amount: number;
  recipient: { name: string };
  createdAt: string;
};

export type TransferRequest = { phone: string; amount: number; pin: string; narration?: string | undefined };

/** The recipient of a transfer: another user at Tier 1 or above; unknown phones are 404. */
async function recipientFor(
  deps: Pick<TransferDeps, 'users'>,
  sender: UserRow,
  phone: string,
): Promise<UserRow> {
  if (phone === sender.phone) {
    const message = 'that is your own number';
    throw new AppError('VALIDATION_ERROR', message, {
      details: { issues: [{ path: ['data', 'phone'], message }] },
    });
  }
  const recipient = await deps.users.findUserByPhone(phone);
  // Below Tier 1 a user cannot transact, so cannot be paid either; told apart from nobody it is not.
  if (recipient === undefined || recipient.kyc_tier < 1) throw notFound('recipient');
  return recipient;
}

async function senderOf(deps: Pick<TransferDeps, 'users' | 'requireTier'>, userId: string): Promise<UserRow> {
  const sender = await deps.users.findUserById(userId);
  if (sender === undefined) throw notFound('user');
  deps.requireTier(sender.kyc_tier, 2);
  return sender;
}

/**
 * The name a sender sees before sending, with the surname masked (`Adaeze O.`), and whether Tier 2
 * verified it: a Tier 1 recipient's name is the one they typed, which a sender should not trust.
 */
export async function lookupRecipient(
  deps: Pick<TransferDeps, 'users' | 'requireTier'>,
  userId: string,
  phone: string,
): Promise<{ name: string; nameVerified: boolean }> {
  const sender = await senderOf(deps, userId);
  const recipient = await recipientFor(deps, sender, phone);
  return { name: deps.users.publicName(recipient), nameVerified: recipient.name_verified_at !== null };
}

/** Random bytes of a transfer's reference, as hex after the Lagos minute: 80 bits. */
const referenceRandomBytes = 10;

/**
 * Sends `amount` naira to the user with `phone`. Checks, in order: Tier 2, the PIN, the recipient,
 * the amount's limits; then one transaction posts, records and tells, or nothing happens at all.
 */
export async function transferToUser(
  deps: TransferDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  request: TransferRequest,
): Promise<TransferView> {
  const sender = await senderOf(deps, userId);
  await deps.verifyTransactionPin(userId, request.pin, sender);
  const recipient = await recipientFor(deps, sender, request.phone);
  const { minKobo, maxKobo, dailyMaxKobo } = deps.config;
  requireWithin(request.amount, 'transfer', { min: koboToNaira(minKobo), max: koboToNaira(maxKobo) });

  const amountKobo = nairaToKobo(request.amount);
  const now = deps.clock.now();
  const id = newId();
  const reference = `TRF${lagosMinute(now)}${randomBytes(referenceRandomBytes).toString('hex')}`;
  const narration = request.narration?.trim() || null;
  // Verified names never change, so what the posting and the notification say stays true.
  const senderName = deps.users.publicName(sender);
  const recipientName = deps.users.publicName(recipient);
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    // The recipient's maximum balance: what would pass it is held, never refused (API.md 17.2).
    // Both wallets locked here, in the one order, before the split is read from them.
    const [credit] = await deps.limits.splitCredits(trx, [{ userId: recipient.id, amountKobo }], [sender.id]);
    // The CBN daily debit limit of the sender, judged under the same lock.
    const dailyDebit = deps.limits.dailyDebitAdmission(trx, { userId: sender.id, amountKobo }, now);
    const [posted] = await postBatch(
      trx,
      [
        {
          reference: walletTransferPostingReference(reference),
          description: `Transfer from ${senderName} to ${recipientName}${narration === null ? '' : `: ${narration}`}`,
          entries: [
            { account: userAccount('wallet', sender.id), amount: -amountKobo },
            ...deps.limits.creditEntries(credit!),
          ],
          metadata: { transferId: id },
        },
      ],
      now,
      {
        referencesUnposted: true,
        admission: allOf(
          senderNotFrozen(deps, trx, sender.id),
          withinDailyTotal(trx, sender.id, amountKobo, dailyMaxKobo, now),
          dailyDebit,
        ),
      },
    );
    if (posted!.status === 'rejected') {
      if (posted!.reason instanceof InsufficientBalanceError) {
        throw new AppError('INSUFFICIENT_FUNDS', `your wallet does not cover ₦${request.amount}`, {
          details: { required: request.amount },
        });
      }
      throw posted!.reason;
    }
    await dailyDebit.save();
    await deps.limits.announceHeld(trx, [credit!], now);
    await trx
      .insertInto('wallet_transfers')
      .values({
        id,
        reference,
        sender_id: sender.id,
        recipient_id: recipient.id,
        amount: amountKobo,
        narration,
        created_at: now,
      })
      .execute();
    await publishEvents(deps.jobs, trx, [
      {
        type: 'wallet.transfer_received',
        userId: recipient.id,
        transferId: id,
        reference,
        senderName,
        amountKobo: amountKobo.toString(),
        occurredAt: now.toISOString(),
      },
    ]);
    return {
      id,
      reference,
      amount: request.amount,
      recipient: { name: recipientName },
      createdAt: now.toISOString(),
    };
  });
}

/** The ledger reference of a transfer's posting (the same on both wallets: one posting moves it). */
export const walletTransferPostingReference = (reference: string) => `transfer:${reference}`;

/**
 * The other person of each of these wallet postings that is a transfer of this user, by posting
 * reference: their name as others see it today (publicName), for the wallet history.
 */
export async function transferCounterparties(
  deps: Pick<TransferDeps, 'db' | 'users'>,
  userId: string,
  postingReferences: readonly string[],
): Promise<Map<string, string>> {
  const references = postingReferences
    .filter((r) => r.startsWith(walletTransferPostingReference('')))
    .map((r) => r.slice(walletTransferPostingReference('').length));
  if (references.length === 0) return new Map();
  const transfers = await deps.db
    .selectFrom('wallet_transfers')
    .select(['reference', 'sender_id', 'recipient_id'])
    .where('reference', 'in', references)
    .where((eb) => eb.or([eb('sender_id', '=', userId), eb('recipient_id', '=', userId)]))
    .execute();
  const otherOf = (t: (typeof transfers)[number]) => (t.sender_id === userId ? t.recipient_id : t.sender_id);
  const others = await deps.users.findUsersByIds([...new Set(transfers.map(otherOf))]);
  const names = new Map<string, string>();
  for (const t of transfers) {
    const other = others.get(otherOf(t));
    if (other !== undefined)
      names.set(walletTransferPostingReference(t.reference), deps.users.publicName(other));
  }
  return names;
}

type Admission = { prepare(): Promise<void>; admit(): Error | null };

/** Admissions of one posting: all prepared under the locks, one after the other; the first refusal answers. */
const allOf = (...admissions: Admission[]): Admission => ({
  async prepare() {
    for (const admission of admissions) await admission.prepare();
  },
  admit: () => {
    for (const admission of admissions) {
      const refusal = admission.admit();
      if (refusal !== null) return refusal;
    }
    return null;
  },
});

/**
 * A frozen sender sends nothing (API.md 17.4, decision 0040): 403 ACCOUNT_FROZEN, read once the
 * sender's wallet is locked, with the sender's row held FOR SHARE to the commit (auth's frozenAmong),
 * so no transfer decided on "not frozen" commits after a freeze. A frozen recipient is still paid.
 */
function senderNotFrozen(
  deps: Pick<TransferDeps, 'users'>,
  trx: Transaction<DB>,
  senderId: string,
): Admission {
  let frozen = false;
  return {
    async prepare() {
      frozen = (await deps.users.frozenAmong(trx, [senderId])).has(senderId);
    },
    admit: () => (frozen ? accountFrozen() : null),
  };
}

/**
 * The sender's daily total as the posting's admission: read once the sender's wallet is locked (so
 * every other transfer of the sender has committed or waits), refusing with 422 ABOVE_MAXIMUM and
 * what is left of the day's allowance.
 */
function withinDailyTotal(
  trx: Transaction<DB>,
  senderId: string,
  amountKobo: bigint,
  dailyMaxKobo: bigint,
  now: Date,
) {
  let sentToday = 0n;
  return {
    async prepare() {
      const row = await trx
        .selectFrom('wallet_transfers')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('amount'), eb.lit(0)).as('total'))
        .where('sender_id', '=', senderId)
        .where('created_at', '>=', lagosDayStart(now))
        .executeTakeFirstOrThrow();
      sentToday = BigInt(row.total);
    },
    admit(): AppError | null {
      if (sentToday + amountKobo <= dailyMaxKobo) return null;
      const remaining = dailyMaxKobo > sentToday ? dailyMaxKobo - sentToday : 0n;
      return new AppError(
        'ABOVE_MAXIMUM',
        `transfers are limited to ₦${koboToNaira(dailyMaxKobo)} a day; ₦${koboToNaira(remaining)} is left today`,
        { details: { limit: koboToNaira(dailyMaxKobo), remaining: koboToNaira(remaining) } },
      );
    },
  };
}
