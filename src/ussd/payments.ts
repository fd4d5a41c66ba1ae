import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { CommitWriter, WithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import { lagosDate } from '../lagos-time.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import type { UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { keyedHash } from '../shared/keyed-hash.ts';
import type { PurchaseOrder, VtuApi } from '../vtu/module.ts';
import type { MenuPayment } from './menu.ts';
import { screens } from './screens.ts';

// A USSD payment is a purchase through the vtu module's api, the one door scheduled runs and bulk
// orders use: the PIN judged by authorise (the app's check and lockout), the order checked and priced
// by orderFor, and the acceptance by buyTogether, under a reference derived from the session and its
// choices, so that a repeated callback meets the first purchase instead of making a second. The CBN
// USSD framework's limits are the channel's own: USSD_SINGLE_MAX on the order's charge, before the
// debit, and USSD_DAILY_MAX in the acceptance's transaction once the buyer's wallet is locked (the
// day's USSD payments summed there, so that two sessions paying at once cannot both pass it).

export type PaymentDeps = {
  db: Kysely<DB>;
  pepper: string;
  vtu: Pick<
    VtuApi,
    'authorise' | 'orderFor' | 'buyTogether' | 'purchaseReference' | 'chargeOf' | 'purchaseRecord'
  >;
  limits: { singleMaxKobo: bigint; dailyMaxKobo: bigint };
  /** What the acceptance's transaction writes of a USSD payment (ussdPaymentRecorder, made once a module). */
  recordPayments: CommitWriter<UssdPaymentRow>;
};

export type UssdPaymentRequest = {
  userId: string;
  gateway: string;
  sessionId: string;
  /** When the session started: the reference's date, the same on every repeat. */
  startedAt: Date;
  payment: MenuPayment;
  pin: string;
  /** The inputs before the PIN: the same choices always name the same purchase. */
  choices: readonly string[];
  /** Now, for the Lagos day the payment counts on. */
  now: Date;
};

/**
 * The purchase's reference: dated at the session's start, then 'U' and 30 hex digits of a keyed hash
 * of the gateway, the session and the choices (never the PIN): one purchase per session and choices.
 */
export function ussdReference(
  deps: Pick<PaymentDeps, 'pepper' | 'vtu'>,
  request: UssdPaymentRequest,
): string {
  const digest = keyedHash(
    deps.pepper,
    'ussd-reference',
    `${request.gateway}\0${request.sessionId}`,
    request.choices.join('*'),
  );
  return deps.vtu.purchaseReference(request.startedAt, `U${digest.slice(0, 30)}`);
}

/** Pays, and answers the screen that says how it went; nothing is debited unless it says Processing. */
export async function payByUssd(deps: PaymentDeps, request: UssdPaymentRequest): Promise<UssdScreen> {
  const reference = ussdReference(deps, request);
  const accepted = screens.processing(request.payment.what, reference);
  try {
    await deps.vtu.authorise(request.userId, request.pin);
    const order = await orderOf(deps, request);
    const chargeKobo = deps.vtu.chargeOf(order);
    if (chargeKobo > deps.limits.singleMaxKobo) return screens.singleMax(deps.limits.singleMaxKobo);
    await deps.vtu.buyTogether(
      request.userId,
      [order],
      ussdDailyCommit(deps, request, reference, chargeKobo),
      [reference],
    );
    return accepted;
  } catch (error) {
    if (error instanceof AppError) return refusalScreen(error);
    // A purchase under this reference already (a repeat that raced past the step's claim): its
    // unique reference refused the second, and the person is told what the first was told.
    const first = await deps.vtu
      .purchaseRecord(deps.db, request.userId, { reference })
      .catch(() => undefined);
    if (first !== undefined) return accepted;
    throw error;
  }
}

const orderOf = (deps: PaymentDeps, request: UssdPaymentRequest): Promise<PurchaseOrder> =>
  request.payment.service === 'airtime'
    ? deps.vtu.orderFor(request.userId, 'airtime', request.payment.fields)
    : deps.vtu.orderFor(request.userId, 'data', request.payment.fields);

/** Each refusal of the door (API.md section 2) as a short END; the rest as "cannot be made by USSD". */
function refusalScreen(error: AppError): UssdScreen {
  const details = error.details as Record<string, unknown> | undefined;
  const nairaDetail = (name: string): bigint | null => {
    const value = details?.[name];
    return typeof value === 'number' ? nairaToKobo(value) : null;
  };
  switch (error.code) {
    case 'INVALID_PIN': {
      const left = details?.attemptsLeft;
      return screens.wrongPin(typeof left === 'number' ? left : 0);
    }
    case 'PIN_LOCKED': {
      const seconds = error.retryAfterSeconds ?? 60;
      return screens.pinLocked(Math.max(1, Math.ceil(seconds / 60)));
    }
    case 'PIN_NOT_SET':
      return screens.pinNotSet();
    case 'KYC_TIER_REQUIRED':
      return screens.tierRequired();
    case 'ACCOUNT_FROZEN':
      return screens.frozen();
    case 'INSUFFICIENT_FUNDS':
      return screens.insufficientFunds();
    case 'LIMIT_EXCEEDED': {
      const remaining = nairaDetail('remaining') ?? 0n;
      return details?.limit === ussdDailyLimitName
        ? screens.ussdDailyMax(remaining)
        : screens.accountDailyLimit(remaining);
    }
    case 'SERVICE_PAUSED':
      return screens.paused();
    case 'PRICE_CHANGED':
      return screens.priceChanged();
    case 'CONFLICT':
      return details?.reason === ussdOffReason ? screens.ussdOff() : screens.refused();
    case 'NETWORK_MISMATCH':
      // The gateway named the caller's network, but the number's prefix is another's (a ported number).
      return screens.prefixMismatch();
    case 'SERVICE_UNAVAILABLE':
    case 'UPSTREAM_UNAVAILABLE':
      return screens.unavailable();
    default:
      return screens.refused();
  }
}

/** The name the USSD daily limit's refusal gives in details.limit, beside 17.2's daily_debit. */
export const ussdDailyLimitName = 'ussd_daily';

/**
 * What the person's USSD payments of this Lagos day (YYYY-MM-DD) charged, kobo, those that failed
 * (refunded) left out: the sum USSD_DAILY_MAX judges, and what getUssdSettings shows as used today.
 */
export async function ussdPaidOn(db: Kysely<DB>, userId: string, lagosDay: string): Promise<bigint> {
  const { rows } = await sql<{ used: bigint | string | null }>`
    select coalesce(sum(amount_kobo), 0) as used from ussd_payments
    where user_id = ${userId} and lagos_day = ${lagosDay}::date and failed_at is null`.execute(db);
  return BigInt(rows[0]?.used ?? 0);
}

/** details.reason of the refusal of a payment whose account had USSD switched off meanwhile. */
const ussdOffReason = 'ussd_off';

export type UssdPaymentRow = {
  reference: string;
  userId: string;
  amountKobo: bigint;
  lagosDay: string;
  now: Date;
  dailyMaxKobo: bigint;
};

/**
 * Written by the acceptance's transaction after the buyer's wallet is locked. USSD still switched on,
 * read FOR SHARE (auth's ussdEnabledAmong): a switch-off waits for this payment's commit, or this
 * payment for the switch-off's and is refused, so none is accepted after the person switched USSD
 * off. Then the day's USSD payments that have not failed, summed, refuse this one with LIMIT_EXCEEDED
 * if it would pass USSD_DAILY_MAX. A refusal rolls the acceptance back whole: nothing is debited.
 * Else it is recorded and counts from now on. One writer a module: the unit of work groups its rows by
 * the writer.
 */
export const ussdPaymentRecorder =
  (
    ussdEnabledAmong: (trx: Transaction<DB>, userIds: readonly string[]) => Promise<Set<string>>,
  ): CommitWriter<UssdPaymentRow> =>
  async (trx, rows) => {
    const switchedOn = await ussdEnabledAmong(
      trx,
      rows.map((row) => row.userId),
    );
    for (const row of rows) {
      if (!switchedOn.has(row.userId)) {
        throw new AppError('CONFLICT', 'USSD was switched off for this account', {
          details: { reason: ussdOffReason },
        });
      }
      const used = await ussdPaidOn(trx, row.userId, row.lagosDay);
      if (used + row.amountKobo > row.dailyMaxKobo) {
        const remaining = row.dailyMaxKobo > used ? row.dailyMaxKobo - used : 0n;
        throw new AppError('LIMIT_EXCEEDED', 'this passes the USSD daily limit', {
          details: {
            limit: ussdDailyLimitName,
            limitAmount: koboToNaira(row.dailyMaxKobo),
            remaining: koboToNaira(remaining),
          },
        });
      }
      await trx
        .insertInto('ussd_payments')
        .values({
          reference: row.reference,
          user_id: row.userId,
          amount_kobo: row.amountKobo,
          lagos_day: row.lagosDay,
          created_at: row.now,
        })
        .execute();
    }
  };

function ussdDailyCommit(
  deps: PaymentDeps,
  request: UssdPaymentRequest,
  reference: string,
  chargeKobo: bigint,
): WithCommit {
  return {
    writeFor: () => {
      return {
        writer: deps.recordPayments as CommitWriter<never>,
        row: {
          reference,
          userId: request.userId,
          amountKobo: chargeKobo,
          lagosDay: lagosDate(request.now),
          now: request.now,
          dailyMaxKobo: deps.limits.dailyMaxKobo,
        } satisfies UssdPaymentRow,
      };
    },
    committed: () => {},
  };
}

/** A failed purchase (refunded) gives its room back to the day's USSD sum. */
export async function markUssdPaymentFailed(db: Kysely<DB>, reference: string, at: Date): Promise<void> {
  await db
    .updateTable('ussd_payments')
    .set({ failed_at: at })
    .where('reference', '=', reference)
    .where('failed_at', 'is', null)
    .execute();
}
