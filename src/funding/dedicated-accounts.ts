import assert from 'node:assert/strict';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { requireKycTier } from '../kyc/guard.ts';
import { matchProfileToRecord } from '../kyc/names.ts';
import { approvedNinName } from '../kyc/service.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { post, ReferenceConflictError } from '../ledger/postings.ts';
import { PaymentProviderError } from '../providers/payments/payment-provider.ts';
import { type CreditOutcome, type FundingDeps, placeholderEmail } from './service.ts';

// Dedicated virtual accounts (SPEC.md item 12, "Authentication" 4; providers.md 1.3): a permanent
// bank account number per user at the payment provider; every bank transfer into it credits the
// user's wallet. Only a user with approved Tier 2 whose profile name still matches the name on the
// NIN record gets one, and it is opened in the NIN name (the provider and the banks show it to
// whoever pays in).
//
// Created once. A user's requests are serialised on the user's row (FOR NO KEY UPDATE, which does not
// block inserts that reference the user), held across the provider calls, so concurrent requests
// make one provider account and all get it. The row is written only after the provider answered;
// when the provider fails nothing is stored (502), and when it succeeded but our insert did not,
// a retry is safe: the provider has one customer per email and one dedicated account per customer,
// so it answers the same customer and the same account again.
//
// Crediting: a charge.success that matches no top-up intent, on channel dedicated_nuban, whose
// receiving account number (or, failing that, customer code) is a dedicated account, credits that
// account's user once per charge reference: the ledger reference `dva:<reference>` is unique forever.

export type DedicatedAccountDeps = Pick<FundingDeps, 'db' | 'clock' | 'payments'> & {
  /** The provider's bank slug (config PAYSTACK_PREFERRED_BANK). */
  preferredBank: string;
};

export type DedicatedAccountView = { accountNumber: string; accountName: string; bankName: string };

/** The ledger reference of a transfer into a dedicated account. */
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

export async function requestDedicatedAccount(
  deps: DedicatedAccountDeps,
  userId: string,
): Promise<DedicatedAccountView> {
  await requireKycTier(deps.db, userId, 2);
  return deps.db.transaction().execute(async (trx) => {
    // One request per user at a time, until commit: a concurrent one waits here, then finds the row.
    const user = await trx
      .selectFrom('users')
      .select(['id', 'first_name', 'last_name', 'email', 'phone'])
      .where('id', '=', userId)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (user === undefined) throw notFound('user');

    const ninName = await approvedNinName(trx, userId);
    if (ninName === null) {
      throw new AppError('KYC_TIER_REQUIRED', 'this needs KYC tier 2', { details: { requiredTier: 2 } });
    }
    const match = matchProfileToRecord({ firstName: user.first_name, lastName: user.last_name }, ninName);
    if (!match.match) {
      throw new AppError(
        'CONFLICT',
        'your profile name no longer matches the name on your NIN record (verified at KYC tier 2); change it back to request a dedicated account',
      );
    }

    const existing = await trx
      .selectFrom('dedicated_accounts')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (existing !== undefined) return toView(existing);

    let account: Awaited<ReturnType<DedicatedAccountDeps['payments']['createDedicatedAccount']>>;
    try {
      const { customerCode } = await deps.payments.createCustomer({
        email: user.email ?? placeholderEmail(userId),
        firstName: ninName.firstName,
        lastName: ninName.lastName,
        phone: user.phone,
      });
      // The provider keeps one customer per email: another user with the same email would be given
      // this user's account. Refused before anything is created for it.
      const taken = await trx
        .selectFrom('dedicated_accounts')
        .select('user_id')
        .where('customer_code', '=', customerCode)
        .where('user_id', '<>', userId)
        .executeTakeFirst();
      if (taken !== undefined) {
        throw new AppError(
          'CONFLICT',
          'the email on your profile is used by another account; change it to request a dedicated account',
        );
      }
      account = await deps.payments.createDedicatedAccount({
        customerCode,
        preferredBank: deps.preferredBank,
      });
    } catch (error) {
      if (error instanceof PaymentProviderError) throw upstreamUnavailable(error);
      throw error;
    }
    const row = await trx
      .insertInto('dedicated_accounts')
      .values({
        user_id: userId,
        customer_code: account.customerCode,
        account_number: account.accountNumber,
        account_name: account.accountName,
        bank_name: account.bankName,
        provider_slug: account.providerSlug,
        created_at: deps.clock.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toView(row);
  });
}

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

/**
 * Credits a verified charge.success (status success, NGN, positive amount) that is a transfer into
 * a dedicated account, once per reference, inside the event's transaction. 'unknown_reference' when
 * it is not a transfer into one of ours.
 */
export async function creditDedicatedTransfer(
  deps: Pick<FundingDeps, 'clock' | 'jobs'>,
  trx: Transaction<DB>,
  payment: { reference: string; paidKobo: bigint; data: unknown },
): Promise<CreditOutcome> {
  assert.ok(payment.paidKobo > 0n, 'a verified payment moves a positive amount');
  const parsed = dedicatedCharge.safeParse(payment.data);
  if (!parsed.success) return 'unknown_reference';
  const accountNumber = parsed.data.authorization?.receiver_bank_account_number ?? null;
  const customerCode = parsed.data.customer?.customer_code ?? null;

  // The receiving account is where the money went; the customer code only when it is not given.
  let account: { user_id: string; account_number: string } | undefined;
  if (accountNumber !== null) {
    account = await trx
      .selectFrom('dedicated_accounts')
      .select(['user_id', 'account_number'])
      .where('account_number', '=', accountNumber)
      .executeTakeFirst();
  } else if (customerCode !== null) {
    account = await trx
      .selectFrom('dedicated_accounts')
      .select(['user_id', 'account_number'])
      .where('customer_code', '=', customerCode)
      .executeTakeFirst();
  }
  if (account === undefined) return 'unknown_reference';

  const now = deps.clock.now();
  let created: boolean;
  try {
    // A concurrent credit of the same reference waits on the ledger's unique reference, then sees it.
    const posting = await post(
      trx,
      {
        reference: dedicatedPostingReference(payment.reference),
        description: 'Bank transfer to your account',
        entries: [
          { account: systemAccounts.collectionsPool, amount: -payment.paidKobo },
          { account: userAccount('wallet', account.user_id), amount: payment.paidKobo },
        ],
        metadata: { chargeReference: payment.reference, accountNumber: account.account_number },
      },
      now,
    );
    created = posting.created;
  } catch (error) {
    // The reference was credited already, with another amount: never a second credit.
    if (error instanceof ReferenceConflictError) return 'already_credited';
    throw error;
  }
  if (!created) return 'already_credited';
  await publishEvent(deps.jobs, trx, {
    type: 'funding.transfer_credited',
    userId: account.user_id,
    reference: payment.reference,
    accountNumber: account.account_number,
    amountKobo: payment.paidKobo.toString(),
    occurredAt: now.toISOString(),
  });
  return 'credited';
}
