import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { systemAccounts } from '../ledger/accounts.ts';
import { ReferenceConflictError } from '../ledger/postings.ts';
import { PaymentProviderError } from '../providers/payments/payment-provider.ts';
import { type CreditDecision, type CreditOutcome, creditOnce } from './credits.ts';
import { type FundingDeps, placeholderEmail } from './service.ts';

// Dedicated virtual accounts (SPEC.md item 12, "Authentication" 4; providers.md 1.3): a permanent
// bank account number per user at the payment provider; every bank deposit into it (a bank transfer
// the person makes from their bank) credits the user's wallet. Only a user with approved Tier 2 gets one, and it is opened in the name on the NIN
// record (the provider and the banks show it to whoever pays in); the profile's names are the
// verified ones from that approval on and cannot change (auth/users.ts setProfileNames).
//
// Created once. No database transaction is held across the provider calls (they take seconds when
// the provider is slow): a user's concurrent requests are serialised by a claim row instead, and
// the others wait for the creator's account, so concurrent requests make one provider account and
// all get it. The row is written only after the provider answered; when the provider fails nothing
// is stored (502), and when it succeeded but our insert did not, a retry is safe: the provider has
// one customer per email and one dedicated account per customer, so it answers the same again.
//
// Crediting: a charge.success that matches no top-up intent, on channel dedicated_nuban, whose
// receiving account number (or, failing that, customer code) is a dedicated account, credits that
// account's user once per charge reference: the ledger reference `dva:<reference>` is unique forever.

export type DedicatedAccountDeps = Pick<
  FundingDeps,
  'db' | 'clock' | 'payments' | 'findUserById' | 'requireKycTier' | 'approvedNinName'
> & {
  /** The provider's bank slug (config PAYSTACK_PREFERRED_BANK). */
  preferredBank: string;
};

export type DedicatedAccountView = { accountNumber: string; accountName: string; bankName: string };

/** The ledger reference of a bank deposit into a dedicated account. */
export const dedicatedPostingReference = (reference: string): string => `dva:${reference}`;

const upstreamUnavailable = (error: PaymentProviderError) =>
  new AppError('UPSTREAM_UNAVAILABLE', 'the payment provider could not be reached; try again', {
    details: { definite: error.definite },
  });

const toView = (row: { account_number: string; account_name: string; bank_name: string }) => ({
  accountNumber: row.account_number,
  accountName: row.account_name,
  bankName: row.bank_name,
});

/** A creator that has not finished within this has died (provider calls time out at 8 s each). */
const CLAIM_STALE_MS = 60_000;
/** How long a concurrent request of the same user waits for the creator's account. */
const WAIT_FOR_CREATOR_MS_MAX = 25_000;
const WAIT_STEPS_MS = [20, 50, 100, 200, 400] as const;

export async function requestDedicatedAccount(
  deps: DedicatedAccountDeps,
  userId: string,
): Promise<DedicatedAccountView> {
  await deps.requireKycTier(userId, 2);
  const holder = await eligibleHolder(deps, userId);
  for (let step = 0, waitedMs = 0; ; step++) {
    const existing = await findAccount(deps, userId);
    if (existing !== undefined) return toView(existing);
    const claimedAt = await claim(deps, userId);
    if (claimedAt !== null) {
      try {
        // The creator before us may have finished between our look-up and our claim.
        const created = await findAccount(deps, userId);
        if (created !== undefined) return toView(created);
        return toView(await createAccount(deps, holder));
      } finally {
        await deps.db
          .deleteFrom('dedicated_account_claims')
          .where('user_id', '=', userId)
          .where('claimed_at', '=', claimedAt)
          .execute();
      }
    }
    // Another request of this user is creating the account: wait for it rather than ask the
    // provider twice, and answer with the same account.
    if (waitedMs >= WAIT_FOR_CREATOR_MS_MAX) {
      throw new AppError('CONFLICT', 'your dedicated account is still being created; try again shortly');
    }
    const pauseMs = WAIT_STEPS_MS[Math.min(step, WAIT_STEPS_MS.length - 1)]!;
    await delay(pauseMs);
    waitedMs += pauseMs;
  }
}

type Holder = {
  userId: string;
  email: string | null;
  phone: string;
  ninName: { firstName: string; lastName: string };
};

/** Approved Tier 2: the account is opened in the NIN name. */
async function eligibleHolder(deps: DedicatedAccountDeps, userId: string): Promise<Holder> {
  const user = await deps.findUserById(userId);
  if (user === undefined) throw notFound('user');
  const ninName = await deps.approvedNinName(userId);
  if (ninName === null) {
    throw new AppError('KYC_TIER_REQUIRED', 'this needs KYC tier 2', { details: { requiredTier: 2 } });
  }
  return { userId, email: user.email, phone: user.phone, ninName };
}

const findAccount = (deps: DedicatedAccountDeps, userId: string) =>
  deps.db.selectFrom('dedicated_accounts').selectAll().where('user_id', '=', userId).executeTakeFirst();

/** Takes the user's creation claim (or a dead creator's); returns its timestamp, or null when held. */
async function claim(deps: DedicatedAccountDeps, userId: string): Promise<Date | null> {
  const now = deps.clock.now();
  const staleBefore = new Date(now.getTime() - CLAIM_STALE_MS);
  const taken = await deps.db
    .insertInto('dedicated_account_claims')
    .values({ user_id: userId, claimed_at: now })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({ claimed_at: now })
        .where('dedicated_account_claims.claimed_at', '<', staleBefore),
    )
    .returning('claimed_at')
    .executeTakeFirst();
  return taken?.claimed_at ?? null;
}

/**
 * Asks the provider for the customer and its account, outside any database transaction, then
 * records the account. When the provider succeeded but the insert did not, a retry is safe: the
 * provider has one customer per email and one dedicated account per customer.
 */
async function createAccount(deps: DedicatedAccountDeps, holder: Holder) {
  let account: Awaited<ReturnType<DedicatedAccountDeps['payments']['createDedicatedAccount']>>;
  try {
    const { customerCode } = await deps.payments.createCustomer({
      email: holder.email ?? placeholderEmail(holder.userId),
      firstName: holder.ninName.firstName,
      lastName: holder.ninName.lastName,
      phone: holder.phone,
    });
    // The provider keeps one customer per email: another user with the same email would be given
    // this user's account. Refused before anything is created for it.
    const taken = await deps.db
      .selectFrom('dedicated_accounts')
      .select('user_id')
      .where('customer_code', '=', customerCode)
      .where('user_id', '<>', holder.userId)
      .executeTakeFirst();
    if (taken !== undefined) throw emailTaken();
    account = await deps.payments.createDedicatedAccount({ customerCode, preferredBank: deps.preferredBank });
  } catch (error) {
    if (error instanceof PaymentProviderError) throw upstreamUnavailable(error);
    throw error;
  }
  try {
    return await deps.db
      .insertInto('dedicated_accounts')
      .values({
        user_id: holder.userId,
        customer_code: account.customerCode,
        account_number: account.accountNumber,
        account_name: account.accountName,
        bank_name: account.bankName,
        provider_slug: account.providerSlug,
        created_at: deps.clock.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === '23505') {
      // A stale claim was taken over while its creator was still alive and finished first: that
      // creator's account is this user's account (the provider answers the same for one customer).
      const mine = await findAccount(deps, holder.userId);
      if (mine !== undefined) return mine;
      // Two users with one email racing: the second gets the first's account number, refused here.
      throw emailTaken();
    }
    throw error;
  }
}

const emailTaken = () =>
  new AppError(
    'CONFLICT',
    'the email on your profile is used by another account; change it to request a dedicated account',
  );

/** The fields of a charge.success that say which dedicated account was paid (providers.md 1.3). */
const dedicatedCharge = z.object({
  channel: z.literal('dedicated_nuban'),
  authorization: z
    .object({
      receiver_bank_account_number: z
        .string()
        .regex(/^\d{10}$/)
        .nullish(),
    })
    .nullish(),
  customer: z.object({ customer_code: z.string().min(1).nullish() }).nullish(),
});

/** Money that came into a dedicated account, as a verified charge.success or transaction says it. */
export type DedicatedPayment = {
  reference: string;
  paidKobo: bigint;
  /** The receiving account; null when the provider did not say. */
  accountNumber: string | null;
  /** The provider's customer the account belongs to; used when the account is not given. */
  customerCode: string | null;
};

/** The dedicated-account fields of a charge's data; null when it is not a bank deposit into one. */
export function dedicatedPaymentOf(
  payment: { reference: string; paidKobo: bigint },
  data: unknown,
): DedicatedPayment | null {
  const parsed = dedicatedCharge.safeParse(data);
  if (!parsed.success) return null;
  return {
    ...payment,
    accountNumber: parsed.data.authorization?.receiver_bank_account_number ?? null,
    customerCode: parsed.data.customer?.customer_code ?? null,
  };
}

/**
 * Decides the credit of a verified payment into a dedicated account (status success, NGN, positive
 * amount), once per reference, inside the caller's transaction (credits.ts: its posting is written
 * with the others of the transaction). 'unknown_reference' when the account is not ours.
 */
export async function decideDedicatedCredit(
  deps: Pick<FundingDeps, 'clock' | 'jobs'>,
  trx: Transaction<DB>,
  payment: DedicatedPayment,
): Promise<CreditDecision> {
  assert.ok(payment.paidKobo > 0n, 'a verified payment moves a positive amount');
  const { accountNumber, customerCode } = payment;

  // The receiving account is where the money went; the customer code only when it is not given.
  // Locked before the ledger (lockDedicatedAccounts says why).
  let account: { user_id: string; account_number: string } | undefined;
  if (accountNumber !== null) {
    account = await trx
      .selectFrom('dedicated_accounts')
      .select(['user_id', 'account_number'])
      .where('account_number', '=', accountNumber)
      .forUpdate()
      .executeTakeFirst();
  } else if (customerCode !== null) {
    account = await trx
      .selectFrom('dedicated_accounts')
      .select(['user_id', 'account_number'])
      .where('customer_code', '=', customerCode)
      .forUpdate()
      .executeTakeFirst();
  }
  if (account === undefined) return 'unknown_reference';
  const { user_id: userId, account_number: receivingAccount } = account;

  const now = deps.clock.now();
  return {
    // The account's lock makes a concurrent credit of the reference wait, then find it posted; the
    // ledger's unique reference makes the credit once whatever happens.
    credit: { userId, amountKobo: payment.paidKobo },
    posting: {
      reference: dedicatedPostingReference(payment.reference),
      // The history's words for it, and part of the posting's content hash: a deposit credited before
      // decision 0038 and heard again must meet its first posting, so this text stays.
      description: 'Bank transfer to your account',
      entries: [
        { account: systemAccounts.collectionsPool, amount: -payment.paidKobo },
        // The wallet's entry, or the wallet's and the held balance's: writeCredits splits it.
      ],
      metadata: { chargeReference: payment.reference, accountNumber: receivingAccount },
    },
    async finish(posted) {
      if (posted.status === 'rejected') {
        // The reference was credited already, with another amount: never a second credit.
        if (posted.reason instanceof ReferenceConflictError) return 'already_credited';
        throw posted.reason;
      }
      if (!posted.value.created) return 'already_credited';
      await publishEvent(deps.jobs, trx, {
        type: 'funding.bank_deposit_credited',
        userId,
        reference: payment.reference,
        accountNumber: receivingAccount,
        amountKobo: payment.paidKobo.toString(),
        occurredAt: now.toISOString(),
      });
      return 'credited';
    },
  };
}

/**
 * Locks the dedicated accounts that these charges' data say were paid into, in one order, before any
 * ledger row: a batch of webhooks crediting several accounts. Every credit of an account locks the
 * account's row first (decideDedicatedCredit), so two transactions crediting one charge reference
 * (the provider delivers a charge many times, to any process) wait on each other there, and the later
 * finds the reference posted. Without it, one credit alone (post(): the reference's index entry, then
 * the wallet) and a batch (postBatch: the wallet, then the reference) deadlocked, or the batch was
 * refused by the unique reference posted since it looked, and both failed the whole batch.
 */
export async function lockDedicatedAccounts(trx: Transaction<DB>, chargeData: unknown[]): Promise<void> {
  const numbers = new Set<string>();
  const codes = new Set<string>();
  for (const data of chargeData) {
    const parsed = dedicatedCharge.safeParse(data);
    if (!parsed.success) continue;
    // As decideDedicatedCredit finds the account: by number, by customer code when none is given.
    const number = parsed.data.authorization?.receiver_bank_account_number ?? null;
    const code = parsed.data.customer?.customer_code ?? null;
    if (number !== null) numbers.add(number);
    else if (code !== null) codes.add(code);
  }
  if (numbers.size === 0 && codes.size === 0) return;
  await trx
    .selectFrom('dedicated_accounts')
    .select('account_number')
    .where((eb) =>
      eb.or([
        ...(numbers.size === 0 ? [] : [eb('account_number', 'in', [...numbers])]),
        ...(codes.size === 0 ? [] : [eb('customer_code', 'in', [...codes])]),
      ]),
    )
    .orderBy('account_number')
    .forUpdate()
    .execute();
}

/** Credits one verified bank deposit into a dedicated account, once, in the caller's transaction. */
export async function creditBankDeposit(
  deps: Pick<FundingDeps, 'clock' | 'jobs' | 'limits' | 'ledgerShards'>,
  trx: Transaction<DB>,
  payment: DedicatedPayment,
): Promise<CreditOutcome> {
  return creditOnce(deps.limits, trx, await decideDedicatedCredit(deps, trx, payment), deps.clock.now(), {
    shards: deps.ledgerShards,
  });
}
