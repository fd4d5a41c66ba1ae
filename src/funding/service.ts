import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AlertsModule } from '../alerts/module.ts';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB, TopupIntentsTable } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { KycModule } from '../kyc/module.ts';
import { systemAccounts } from '../ledger/accounts.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import { type PaymentProvider, PaymentProviderError } from '../providers/payments/payment-provider.ts';
import { type CreditDecision, type CreditLimits, type CreditOutcome, creditOnce } from './credits.ts';
import { topupNairaMax, topupNairaMin } from './schemas.ts';

// Wallet funding through checkout (SPEC.md items 12 and 14). A top-up intent is created only once
// the provider has accepted its reference; the wallet is credited only on a verified success: a
// signed charge.success webhook (webhook.ts) or the provider's own answer to a verification by
// reference. Both go through creditTopup, which credits a reference at most once: the intent row is
// locked, its credited_at is checked under that lock, and the ledger posting's reference
// `topup:<reference>` is unique forever, a second line of defence. A browser redirect never credits.

export type FundingDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  payments: PaymentProvider;
  // From other modules' api (funding/module.ts says what each is for).
  raiseAlert: AlertsModule['api']['raiseAlert'];
  findUserById: AuthApi['findUserById'];
  requireKycTier: KycModule['api']['requireKycTier'];
  approvedNinName: KycModule['api']['approvedNinName'];
  limits: CreditLimits;
  /** The rows each hot system account is kept in (LEDGER_SHARDS): the collections pool's credits spread over them. */
  ledgerShards: number;
  /**
   * Where the checkout sends the payer back (the web client's return page, which asks verifyTopup:
   * the redirect itself never credits anything). Read when an intent is made.
   */
  checkoutReturnUrl?: string;
};

export type Intent = Selectable<TopupIntentsTable>;

export const topupKoboMin = BigInt(topupNairaMin) * 100n;
export const topupKoboMax = BigInt(topupNairaMax) * 100n;

/** The ledger reference of a top-up's credit. */
export const topupPostingReference = (reference: string): string => `topup:${reference}`;

/** Paystack accepts letters, digits, '-', '.' and '=' in a reference: no underscore. */
const newTopupReference = (): string => `top-${randomBytes(12).toString('hex')}`;

/** Paystack requires an email; a user without one gets a stable address that can never receive mail. */
export const placeholderEmail = (userId: string): string => `${userId}@users.billrail.invalid`;

const upstreamUnavailable = (error: PaymentProviderError) =>
  new AppError('UPSTREAM_UNAVAILABLE', 'the payment provider could not be reached; try again', {
    details: { definite: error.definite },
  });

export async function createTopupIntent(
  deps: FundingDeps,
  userId: string,
  amountNaira: number,
): Promise<{ reference: string; checkoutUrl: string; amount: number; status: 'pending' }> {
  if (amountNaira < topupNairaMin) {
    throw new AppError('BELOW_MINIMUM', `the minimum top-up is ₦${topupNairaMin}`, {
      details: { limit: topupNairaMin },
    });
  }
  if (amountNaira > topupNairaMax) {
    throw new AppError('ABOVE_MAXIMUM', `the maximum top-up is ₦${topupNairaMax}`, {
      details: { limit: topupNairaMax },
    });
  }
  const amountKobo = nairaToKobo(amountNaira);
  assert.ok(amountKobo >= topupKoboMin, 'a top-up is at least the minimum');
  assert.ok(amountKobo <= topupKoboMax, 'a top-up is at most the maximum');

  const user = await deps.findUserById(userId);
  if (user === undefined) throw notFound('user');
  const reference = newTopupReference();
  // The provider first: an intent exists only for a reference the provider accepted, and nothing is
  // written when it cannot be reached. A checkout the provider may have opened but never told us
  // about cannot be paid, because the user never got its URL.
  let checkout: { authorizationUrl: string };
  try {
    checkout = await deps.payments.initializeTransaction({
      reference,
      amountKobo,
      email: user.email ?? placeholderEmail(userId),
      metadata: { userId },
      ...(deps.checkoutReturnUrl === undefined ? {} : { callbackUrl: deps.checkoutReturnUrl }),
    });
  } catch (error) {
    if (error instanceof PaymentProviderError) throw upstreamUnavailable(error);
    throw error;
  }
  const now = deps.clock.now();
  await deps.db
    .insertInto('topup_intents')
    .values({
      id: newId(),
      user_id: userId,
      reference,
      amount: amountKobo,
      status: 'pending',
      credited_amount: null,
      created_at: now,
      updated_at: now,
      credited_at: null,
    })
    .execute();
  return {
    reference,
    checkoutUrl: checkout.authorizationUrl,
    amount: koboToNaira(amountKobo),
    status: 'pending',
  };
}

/**
 * Decides the credit of the intent with this reference with what was actually paid, at most once,
 * inside the given transaction (credits.ts: its posting is written with the others of the
 * transaction). The caller has verified the payment (signature or provider answer): status success,
 * currency NGN, a positive amount.
 */
export async function decideTopupCredit(
  deps: Pick<FundingDeps, 'clock' | 'jobs' | 'raiseAlert'>,
  trx: Transaction<DB>,
  payment: { reference: string; paidKobo: bigint; source: 'webhook' | 'verify' },
): Promise<CreditDecision> {
  assert.ok(payment.paidKobo > 0n, 'a verified payment moves a positive amount');
  const intent = await trx
    .selectFrom('topup_intents')
    .selectAll()
    .where('reference', '=', payment.reference)
    .forUpdate()
    .executeTakeFirst();
  if (intent === undefined) return 'unknown_reference';
  if (intent.credited_at !== null) return 'already_credited';

  // Read under the lock, so that credits order as they committed.
  const now = deps.clock.now();
  return {
    credit: { userId: intent.user_id, amountKobo: payment.paidKobo },
    posting: {
      reference: topupPostingReference(intent.reference),
      description: 'Wallet top-up',
      entries: [
        { account: systemAccounts.collectionsPool, amount: -payment.paidKobo },
        // The wallet's entry, or the wallet's and the held balance's: writeCredits splits it.
      ],
      metadata: { topupReference: intent.reference, source: payment.source },
    },
    async finish(posted) {
      if (posted.status === 'rejected') throw posted.reason;
      // The intent row is locked and was not credited, so neither was its reference, unless by
      // another event of the same batch for the same intent (decided before this one was written).
      if (!posted.value.created) return 'already_credited';
      await trx
        .updateTable('topup_intents')
        .set({ status: 'success', credited_amount: payment.paidKobo, credited_at: now, updated_at: now })
        .where('id', '=', intent.id)
        .execute();
      if (payment.paidKobo !== intent.amount) {
        await deps.raiseAlert(
          trx,
          {
            kind: 'topup_amount_mismatch',
            message: `top-up ${intent.reference} paid ${payment.paidKobo} kobo, not the ${intent.amount} kobo asked; credited what was paid`,
            details: {
              reference: intent.reference,
              userId: intent.user_id,
              expectedKobo: intent.amount.toString(),
              paidKobo: payment.paidKobo.toString(),
              source: payment.source,
            },
          },
          now,
          deps.jobs,
        );
      }
      await publishEvent(deps.jobs, trx, {
        type: 'funding.topup_credited',
        userId: intent.user_id,
        reference: intent.reference,
        amountKobo: payment.paidKobo.toString(),
        occurredAt: now.toISOString(),
      });
      return 'credited';
    },
  };
}

/** Credits one verified payment to its intent's wallet, at most once, in the caller's transaction. */
export async function creditTopup(
  deps: Pick<FundingDeps, 'clock' | 'jobs' | 'raiseAlert' | 'limits' | 'ledgerShards'>,
  trx: Transaction<DB>,
  payment: { reference: string; paidKobo: bigint; source: 'webhook' | 'verify' },
): Promise<CreditOutcome> {
  return creditOnce(deps.limits, trx, await decideTopupCredit(deps, trx, payment), deps.clock.now(), {
    shards: deps.ledgerShards,
  });
}

const pendingStatuses = new Set(['abandoned', 'ongoing', 'pending', 'processing', 'queued']);

/**
 * What one verification of an intent with the provider did: `credited` (this call credited it),
 * `already_credited` (a webhook or another verification did, before or meanwhile), `failed` (this
 * call marked it failed on the provider's definite failure), `expired` (this call closed it as
 * failed: the checkout was left unpaid for longer than the caller's window), `settled` (it was
 * failed or credited meanwhile by someone else), `pending` (nothing to do yet).
 */
export type ReconcileOutcome = 'credited' | 'already_credited' | 'failed' | 'expired' | 'settled' | 'pending';

export type ReconcileResult = {
  status: 'pending' | 'success' | 'failed';
  credited: boolean;
  outcome: ReconcileOutcome;
};

/**
 * Asks the provider about one intent and acts on a definite answer, once: a verified success is
 * credited through creditTopup, a definite failure marks a pending intent failed. Shared by
 * verifyTopup (a user asks) and reconciliation (a missed webhook, SPEC.md item 14). The provider is
 * asked outside any transaction; a PaymentProviderError propagates and nothing has changed.
 * `closeAbandonedBefore`: an intent created before it whose checkout the provider still reports
 * unpaid ('abandoned') is closed as failed; a payment that arrives later is still credited by its
 * webhook, since creditTopup credits an uncredited intent whatever its status.
 */
export async function reconcileTopup(
  deps: FundingDeps,
  intent: Intent,
  options: { closeAbandonedBefore?: Date } = {},
): Promise<ReconcileResult> {
  const reference = intent.reference;
  if (intent.credited_at !== null) return { status: 'success', credited: true, outcome: 'already_credited' };

  const verified = await deps.payments.verifyTransaction(reference);
  const current = (): ReconcileResult => ({ status: intent.status, credited: false, outcome: 'pending' });
  // The provider does not know a reference it accepted: nothing was paid yet as far as we can tell.
  if (verified === null) return current();

  if (verified.status === 'success') {
    if (verified.currency !== 'NGN' || verified.amountKobo <= 0n) {
      // Verification asks again and again (a user, every reconciliation run): one alert per
      // reference, kept once by the alerts' unique dedupe key, also when two runs race.
      await deps.raiseAlert(
        deps.db,
        {
          kind: 'topup_currency_mismatch',
          dedupeKey: `topup_currency_mismatch:${reference}`,
          message: `top-up ${reference} was reported paid in ${verified.currency} ${verified.amountKobo}; not credited`,
          details: {
            reference,
            userId: intent.user_id,
            currency: verified.currency,
            amount: verified.amountKobo.toString(),
          },
        },
        deps.clock.now(),
        deps.jobs,
      );
      return current();
    }
    const outcome = await deps.db
      .transaction()
      .execute((trx) =>
        creditTopup(deps, trx, { reference, paidKobo: verified.amountKobo, source: 'verify' }),
      );
    assert.notEqual(outcome, 'unknown_reference', 'the intent exists, so its reference is known');
    return {
      status: 'success',
      credited: true,
      outcome: outcome === 'credited' ? 'credited' : 'already_credited',
    };
  }
  const expired =
    verified.status === 'abandoned' &&
    options.closeAbandonedBefore !== undefined &&
    intent.created_at < options.closeAbandonedBefore;
  if (verified.status === 'failed' || verified.status === 'reversed' || expired) {
    // Only a pending intent fails: one credited meanwhile (a webhook) stays credited.
    const now = deps.clock.now();
    const failed = await deps.db
      .updateTable('topup_intents')
      .set({ status: 'failed', updated_at: now })
      .where('id', '=', intent.id)
      .where('status', '=', 'pending')
      .returning('status')
      .executeTakeFirst();
    if (failed !== undefined)
      return { status: 'failed', credited: false, outcome: expired ? 'expired' : 'failed' };
    const fresh = await deps.db
      .selectFrom('topup_intents')
      .select(['status', 'credited_at'])
      .where('id', '=', intent.id)
      .executeTakeFirstOrThrow();
    return { status: fresh.status, credited: fresh.credited_at !== null, outcome: 'settled' };
  }
  assert.ok(pendingStatuses.has(verified.status), `unexpected transaction status ${verified.status}`);
  return { status: 'pending', credited: false, outcome: 'pending' };
}

/**
 * Asks the provider about the caller's own intent and credits it once on a verified success. The
 * provider is asked outside any transaction; a provider that cannot be reached changes nothing.
 */
export async function verifyTopup(
  deps: FundingDeps,
  userId: string,
  reference: string,
): Promise<{ reference: string; status: 'pending' | 'success' | 'failed'; credited: boolean }> {
  const intent = await findOwnIntent(deps.db, userId, reference);
  try {
    const result = await reconcileTopup(deps, intent);
    return { reference, status: result.status, credited: result.credited };
  } catch (error) {
    if (error instanceof PaymentProviderError) throw upstreamUnavailable(error);
    throw error;
  }
}

async function findOwnIntent(db: Kysely<DB>, userId: string, reference: string): Promise<Intent> {
  const intent = await db
    .selectFrom('topup_intents')
    .selectAll()
    .where('reference', '=', reference)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  // Another user's reference is 404, exactly like one that does not exist.
  if (intent === undefined) throw notFound('top-up');
  return intent;
}
