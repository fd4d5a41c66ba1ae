import type { DomainEvent, DomainEventType, EventOf } from '../events/domain-events.ts';
import { formatNaira } from '../money.ts';

// What each platform event tells its user (API.md section 10): the inbox entry, and later the
// email and the push of the same fact. `source` names the fact, so that the event job running twice
// makes one entry. Messages carry amounts and references, never a secret of the account (no PIN,
// code or session token). What a purchase delivered is not one: an electricity token and exam pins
// are what the buyer paid for, and go wherever the purchase's message goes (in the inbox as
// `data.token` / `data.pins`, and in the body the email and the push carry).

export type NotificationKind =
  | 'topup_credited'
  | 'transfer_credited'
  | 'purchase_succeeded'
  | 'purchase_failed'
  | 'wallet_transfer_received'
  | 'lock_created'
  | 'lock_matured'
  | 'lock_broken'
  | 'dispute_resolved'
  | 'wallet_adjusted'
  | 'balance_held'
  | 'held_released'
  | 'checkin_claimed'
  | 'milestone_reached'
  | 'referral_qualified'
  | 'kyc_approved'
  | 'kyc_rejected'
  | 'ops_alert'
  | 'pin_changed'
  | 'new_device_sign_in'
  | 'account_frozen'
  | 'account_unfrozen'
  | 'second_factor_reset'
  | 'schedule_skipped'
  | 'schedule_paused'
  | 'account_closing'
  | 'account_closure_cancelled'
  | 'data_export_ready'
  /** A broadcast published to everyone (pushed; it is read in listBroadcasts, not the inbox). */
  | 'broadcast';

export const notificationKinds: readonly NotificationKind[] = [
  'topup_credited',
  'transfer_credited',
  'purchase_succeeded',
  'purchase_failed',
  'wallet_transfer_received',
  'lock_created',
  'lock_matured',
  'lock_broken',
  'dispute_resolved',
  'wallet_adjusted',
  'balance_held',
  'held_released',
  'checkin_claimed',
  'milestone_reached',
  'referral_qualified',
  'kyc_approved',
  'kyc_rejected',
  'ops_alert',
  'pin_changed',
  'new_device_sign_in',
  'account_frozen',
  'account_unfrozen',
  'second_factor_reset',
  'schedule_skipped',
  'schedule_paused',
  'account_closing',
  'account_closure_cancelled',
  'data_export_ready',
  'broadcast',
];

/** Security mail (API.md section 10): sent whatever the user's email switches say. */
export const securityKinds: readonly NotificationKind[] = [
  'pin_changed',
  'new_device_sign_in',
  'account_frozen',
  'account_unfrozen',
  'second_factor_reset',
  // Closing the account, requested or cancelled: whoever holds the PIN could ask it (decision 0047).
  'account_closing',
  'account_closure_cancelled',
];

export type NotificationMessage = {
  userId: string;
  kind: NotificationKind;
  title: string;
  body: string;
  data: Record<string, string | number | boolean | null | string[]>;
  source: string;
};

const kobo = (decimal: string) => formatNaira(BigInt(decimal));

const serviceNames: Record<string, string> = {
  airtime: 'Airtime',
  data: 'Data',
  cable: 'Cable TV',
  electricity: 'Electricity',
  betting: 'Betting top-up',
  education: 'Exam pin',
  social: 'Social media order',
  airtime_to_cash: 'Airtime to cash',
};

/** A service's name inside a sentence: "cable TV", not "cable tv" (only a capital that starts it goes). */
const inSentence = (name: string) => name.replace(/^[A-Z](?![A-Z])/, (first) => first.toLowerCase());

/** The Lagos calendar day of an instant, as a person reads it: "26 December 2026". */
const lagosDay = new Intl.DateTimeFormat('en-NG', {
  timeZone: 'Africa/Lagos',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
});

type Delivered = { token?: string; units?: string; pins?: string[] };

/** A meter token as it is typed into the meter: in groups of four digits. */
const grouped = (token: string) =>
  /^\d+$/.test(token.replace(/[\s-]/g, ''))
    ? token.replace(/[\s-]/g, '').replace(/(\d{4})(?=\d)/g, '$1 ')
    : token;

/** What a purchase delivered, in words for the body (and so the email and the push): empty for nothing. */
function deliveryText(event: Delivered): string {
  const parts: string[] = [];
  if (event.token !== undefined) {
    parts.push(` Token: ${grouped(event.token)}${event.units === undefined ? '' : ` (${event.units})`}.`);
  }
  if (event.pins !== undefined && event.pins.length > 0) {
    parts.push(` ${event.pins.length === 1 ? 'PIN' : 'PINs'}: ${event.pins.join('; ')}.`);
  }
  return parts.join('');
}

/** What a purchase delivered, as the inbox entry's data carries it (`data.token`, `data.pins`). */
function deliveryData(event: Delivered): Record<string, string | string[]> {
  return {
    ...(event.token === undefined ? {} : { token: event.token }),
    ...(event.units === undefined ? {} : { units: event.units }),
    ...(event.pins === undefined || event.pins.length === 0 ? {} : { pins: event.pins }),
  };
}

/** The message an event gives its user, or null for events no user is told about (provider floats). */
export function messageFor(event: DomainEvent): NotificationMessage | null {
  // The table is keyed by the event's type, so each entry takes that type's event: TypeScript cannot
  // follow the key and the event together through one lookup, hence the one cast.
  const message = messages[event.type] as (event: DomainEvent) => NotificationMessage | null;
  return message(event);
}

/** Each event's message, one named function per kind (an entry is required for every event type). */
const messages: { [T in DomainEventType]: (event: EventOf<T>) => NotificationMessage | null } = {
  'auth.pin_changed': authPinChanged,
  'auth.new_device_sign_in': authNewDeviceSignIn,
  'auth.account_frozen': authAccountFrozen,
  'auth.account_unfrozen': authAccountUnfrozen,
  'auth.second_factor_reset': authSecondFactorReset,
  'funding.topup_credited': fundingTopupCredited,
  'funding.bank_deposit_credited': bankDepositCredited,
  'vtu.purchase_succeeded': vtuPurchaseSucceeded,
  'vtu.delivery_arrived': vtuDeliveryArrived,
  'vtu.purchase_failed': vtuPurchaseFailed,
  'wallet.transfer_received': walletTransferReceived,
  'savings.lock_created': savingsLockCreated,
  'savings.lock_matured': savingsLockMatured,
  'savings.lock_broken': savingsLockBroken,
  'disputes.resolved': disputesResolved,
  'adjustments.approved': adjustmentsApproved,
  'limits.balance_held': limitsBalanceHeld,
  'limits.held_released': limitsHeldReleased,
  'growth.checkin_claimed': growthCheckinClaimed,
  'growth.milestone_reached': growthMilestoneReached,
  'growth.referral_qualified': growthReferralQualified,
  'schedule.run_skipped': scheduleRunSkipped,
  'schedule.paused': schedulePaused,
  'account_closure.requested': accountClosureRequested,
  'account_closure.cancelled': accountClosureCancelled,
  'data_export.ready': dataExportReady,
  'kyc.tier_approved': kycTierApproved,
  'kyc.tier_rejected': kycTierRejected,
  'funding.float_top_up_settled': untold,
  'funding.float_top_up_failed': untold,
};

/** What the person does about each reason that stops an account closing (requestAccountDeletion's). */
const closureReasonWords: Record<string, string> = {
  balance_not_zero: 'your wallet still has money in it (spend it or send it to someone)',
  held_balance: 'you have a held balance (verify the next tier so that it moves into your wallet)',
  purchases_processing: 'a purchase is still processing (wait for it to complete)',
  open_dispute: 'a problem you reported is still open (wait for it to be resolved)',
  active_savings: 'a savings lock is still active (wait for it to mature, or break it)',
  active_schedules: 'you have scheduled purchases (cancel them)',
};

function accountClosureRequested(event: EventOf<'account_closure.requested'>): NotificationMessage {
  const day = lagosDay.format(new Date(event.effectiveAt));
  return {
    userId: event.userId,
    kind: 'account_closing',
    title: 'Your account will close',
    body: `You asked to close your billrail account. It closes on ${day}; until then you can use it as before, and cancel the closing in Settings. If this was not you, cancel it and change your PIN at once.`,
    data: { effectiveAt: event.effectiveAt },
    source: `account-closing:${event.requestId}`,
  };
}

function accountClosureCancelled(event: EventOf<'account_closure.cancelled'>): NotificationMessage {
  const why = event.reasons.map((reason) => closureReasonWords[reason] ?? reason).join('; ');
  return {
    userId: event.userId,
    kind: 'account_closure_cancelled',
    title: 'Your account was not closed',
    body:
      event.by === 'person'
        ? 'You cancelled the closing of your billrail account: it stays open.'
        : `Your billrail account was not closed, because ${why}. It stays open; ask again once that is done.`,
    data: { by: event.by, reasons: event.reasons },
    source: `account-closure-cancelled:${event.requestId}`,
  };
}

/** Events no user is told about (float top-ups of the providers). */
function untold(): null {
  return null;
}

function authPinChanged(event: EventOf<'auth.pin_changed'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'pin_changed',
    title: 'Your transaction PIN was changed',
    body: 'Your billrail transaction PIN was just changed. If this was not you, contact support at once.',
    data: {},
    source: `pin-changed:${event.occurredAt}`,
  };
}

function authNewDeviceSignIn(event: EventOf<'auth.new_device_sign_in'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'new_device_sign_in',
    title: 'New sign-in to your account',
    body: `Your billrail account was signed in to from a new device (${event.device}, ${event.ip}). If this was not you, contact support at once.`,
    data: { device: event.device, ip: event.ip },
    source: `sign-in:${event.signInId}`,
  };
}

// The person is told that the account is frozen, never the operator's reason (decision 0040).
function authAccountFrozen(event: EventOf<'auth.account_frozen'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'account_frozen',
    title: 'Your account is frozen',
    body: 'Your billrail account has been frozen: you can sign in and see everything, and money can still come in, but nothing can be paid from it (purchases, scheduled purchases, bulk orders and transfers) until it is unfrozen. Contact support to learn more.',
    data: {},
    source: `account-frozen:${event.occurredAt}`,
  };
}

function authAccountUnfrozen(event: EventOf<'auth.account_unfrozen'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'account_unfrozen',
    title: 'Your account is unfrozen',
    body: 'Your billrail account is no longer frozen: you can pay from it again, and your scheduled purchases run at their next times.',
    data: {},
    source: `account-unfrozen:${event.occurredAt}`,
  };
}

// The administrator is told at once, by every channel: if they did not ask, someone is taking their
// place (decision 0039).
function authSecondFactorReset(event: EventOf<'auth.second_factor_reset'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'second_factor_reset',
    title: 'Your admin authenticator was removed',
    body: 'Another billrail administrator removed your authenticator and signed you out everywhere. Sign in and enrol a new one to use the admin screens again. If you did not ask for this, tell the other administrators at once.',
    data: {},
    source: `second-factor-reset:${event.occurredAt}`,
  };
}

function fundingTopupCredited(event: EventOf<'funding.topup_credited'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'topup_credited',
    title: 'Wallet funded',
    body: `${kobo(event.amountKobo)} was added to your wallet (reference ${event.reference}).`,
    data: { reference: event.reference, amount: kobo(event.amountKobo) },
    source: `topup:${event.reference}`,
  };
}

/**
 * A bank deposit is told under the kind `transfer_credited`: that is the contract's name (an
 * entry's `kind` and a key of the per-kind switches of get/updateNotificationSettings in
 * /openapi.json, which the web client reads), and the domain's rename (decision 0038) leaves the
 * contract as it is. The source keeps its stored prefix too, so that an event
 * published before the rename and run after it meets its first entry.
 */
function bankDepositCredited(event: EventOf<'funding.bank_deposit_credited'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'transfer_credited',
    title: 'Bank transfer received',
    body: `${kobo(event.amountKobo)} sent to your account ${event.accountNumber} was added to your wallet.`,
    data: { reference: event.reference, amount: kobo(event.amountKobo) },
    source: `transfer-in:${event.reference}`,
  };
}

function vtuPurchaseSucceeded(event: EventOf<'vtu.purchase_succeeded'>): NotificationMessage {
  const what = serviceNames[event.service] ?? event.service;
  if (event.service === 'airtime_to_cash') {
    return {
      userId: event.userId,
      kind: 'purchase_succeeded',
      title: 'Airtime received: wallet credited',
      body: `Your airtime arrived: ${kobo(event.amountKobo)} was added to your wallet (reference ${event.reference}).`,
      data: { transactionId: event.transactionId, reference: event.reference, service: event.service },
      source: `purchase:${event.transactionId}`,
    };
  }
  const outcome =
    event.refundedKobo === undefined
      ? `Your ${inSentence(what)} purchase of ${kobo(event.amountKobo)} succeeded (reference ${event.reference}).`
      : `Your ${inSentence(what)} purchase of ${kobo(event.amountKobo)} was delivered in part: ${kobo(event.refundedKobo)} for the rest is back in your wallet (reference ${event.reference}).`;
  const awaited =
    event.deliveryAwaited === true
      ? ` Your ${event.service === 'education' ? 'pins are' : 'token is'} on the way: we will send ${event.service === 'education' ? 'them' : 'it'} here, by push and by email as soon as the provider releases ${event.service === 'education' ? 'them' : 'it'}.`
      : '';
  return {
    userId: event.userId,
    kind: 'purchase_succeeded',
    title: `${what} delivered`,
    body: `${outcome}${deliveryText(event)}${awaited}`,
    data: {
      transactionId: event.transactionId,
      reference: event.reference,
      service: event.service,
      ...deliveryData(event),
      ...(event.deliveryAwaited === true ? { deliveryAwaited: true } : {}),
    },
    source: `purchase:${event.transactionId}`,
  };
}

function vtuDeliveryArrived(event: EventOf<'vtu.delivery_arrived'>): NotificationMessage {
  const pins = event.service === 'education';
  const what = inSentence(serviceNames[event.service] ?? event.service);
  return {
    userId: event.userId,
    // The rest of the purchase's success: it reaches the user wherever that message may.
    kind: 'purchase_succeeded',
    title: pins ? 'Your exam pins are here' : 'Your electricity token is here',
    body: `The ${pins ? 'pins' : 'token'} of your ${what} purchase (reference ${event.reference}) arrived.${deliveryText(event)}`,
    data: {
      transactionId: event.transactionId,
      reference: event.reference,
      service: event.service,
      ...deliveryData(event),
    },
    source: `purchase-delivery:${event.transactionId}`,
  };
}

function vtuPurchaseFailed(event: EventOf<'vtu.purchase_failed'>): NotificationMessage {
  const what = serviceNames[event.service] ?? event.service;
  if (event.service === 'airtime_to_cash') {
    return {
      userId: event.userId,
      kind: 'purchase_failed',
      title: 'Airtime to cash not confirmed',
      body: `The provider did not confirm receiving your airtime in time, so nothing was credited (reference ${event.reference}).`,
      data: { transactionId: event.transactionId, reference: event.reference, service: event.service },
      source: `purchase:${event.transactionId}`,
    };
  }
  return {
    userId: event.userId,
    kind: 'purchase_failed',
    title: `${what} failed: refunded`,
    body: `Your ${inSentence(what)} purchase of ${kobo(event.amountKobo)} failed and the amount is back in your wallet (reference ${event.reference}).`,
    data: { transactionId: event.transactionId, reference: event.reference, service: event.service },
    source: `purchase:${event.transactionId}`,
  };
}

function walletTransferReceived(event: EventOf<'wallet.transfer_received'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'wallet_transfer_received',
    title: 'Money received',
    body: `${event.senderName} sent you ${kobo(event.amountKobo)} (reference ${event.reference}).`,
    data: { transferId: event.transferId, reference: event.reference, amount: kobo(event.amountKobo) },
    source: `wallet-transfer:${event.transferId}`,
  };
}

function savingsLockCreated(event: EventOf<'savings.lock_created'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'lock_created',
    title: 'Savings locked',
    body: `${kobo(event.amountKobo)} is locked for ${event.days} days, until ${lagosDay.format(new Date(event.maturesAt))}.`,
    data: { lockId: event.lockId, amount: kobo(event.amountKobo) },
    source: `lock-created:${event.lockId}`,
  };
}

function savingsLockMatured(event: EventOf<'savings.lock_matured'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'lock_matured',
    title: 'Savings matured',
    body: `Your savings lock matured: ${kobo(event.amountKobo)} is back in your wallet.`,
    data: { lockId: event.lockId, amount: kobo(event.amountKobo) },
    source: `lock-closed:${event.lockId}`,
  };
}

function savingsLockBroken(event: EventOf<'savings.lock_broken'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'lock_broken',
    title: 'Savings lock broken',
    body: `${kobo(event.refundedKobo)} is back in your wallet; ${kobo(event.penaltyKobo)} was kept as the early-break penalty.`,
    data: { lockId: event.lockId, refunded: kobo(event.refundedKobo), penalty: kobo(event.penaltyKobo) },
    source: `lock-closed:${event.lockId}`,
  };
}

function disputesResolved(event: EventOf<'disputes.resolved'>): NotificationMessage {
  return event.decision === 'refund'
    ? {
        userId: event.userId,
        kind: 'dispute_resolved',
        title: 'Problem resolved: refunded',
        body: `${kobo(event.refundedKobo)} is back in your wallet for the problem you reported with ${event.reference}: ${event.resolution}`,
        data: {
          disputeId: event.disputeId,
          reference: event.reference,
          decision: event.decision,
          refunded: kobo(event.refundedKobo),
        },
        source: `dispute:${event.disputeId}`,
      }
    : {
        userId: event.userId,
        kind: 'dispute_resolved',
        title: 'Problem reviewed: no refund',
        body: `We looked into the problem you reported with ${event.reference} and made no refund: ${event.resolution}`,
        data: { disputeId: event.disputeId, reference: event.reference, decision: event.decision },
        source: `dispute:${event.disputeId}`,
      };
}

function adjustmentsApproved(event: EventOf<'adjustments.approved'>): NotificationMessage {
  const amount = kobo(event.amountKobo);
  return {
    userId: event.userId,
    kind: 'wallet_adjusted',
    title: event.direction === 'credit' ? 'Wallet credited' : 'Wallet debited',
    body:
      event.direction === 'credit'
        ? `${amount} was added to your wallet: ${event.reason}`
        : `${amount} was taken from your wallet: ${event.reason}`,
    data: { adjustmentId: event.adjustmentId, direction: event.direction, amount },
    source: `adjustment:${event.adjustmentId}`,
  };
}

function limitsBalanceHeld(event: EventOf<'limits.balance_held'>): NotificationMessage {
  const amount = kobo(event.heldKobo);
  return {
    userId: event.userId,
    kind: 'balance_held',
    title: 'Money held: over your maximum balance',
    body: `${amount} is held because your wallet would pass your tier's maximum balance. It moves into your wallet by itself when you verify the next tier or your balance falls.`,
    data: { amount },
    source: `balance-held:${event.userId}:${event.occurredAt}`,
  };
}

function limitsHeldReleased(event: EventOf<'limits.held_released'>): NotificationMessage {
  const amount = kobo(event.releasedKobo);
  const still = BigInt(event.stillHeldKobo) > 0n ? ` ${kobo(event.stillHeldKobo)} is still held.` : '';
  return {
    userId: event.userId,
    kind: 'held_released',
    title: 'Held money released',
    body: `${amount} of your held balance is now in your wallet.${still}`,
    data: { amount },
    source: `held-released:${event.userId}:${event.occurredAt}`,
  };
}

function growthCheckinClaimed(event: EventOf<'growth.checkin_claimed'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'checkin_claimed',
    title: 'Check-in claimed',
    body: `${kobo(event.rewardKobo)} added to your check-in rewards. Streak: ${event.streak} day${event.streak === 1 ? '' : 's'}.`,
    data: { day: event.day, streak: event.streak },
    source: `checkin:${event.day}`,
  };
}

function growthMilestoneReached(event: EventOf<'growth.milestone_reached'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'milestone_reached',
    title: 'Savings milestone reached',
    body: `You have now locked ${kobo(event.thresholdKobo)} in savings in all.`,
    data: { threshold: kobo(event.thresholdKobo) },
    source: `milestone:${event.thresholdKobo}`,
  };
}

function growthReferralQualified(event: EventOf<'growth.referral_qualified'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'referral_qualified',
    title: 'Referral bonus earned',
    body: `Someone you invited was verified: ${kobo(event.bonusKobo)} was added to your locked bonus.`,
    data: { bonus: kobo(event.bonusKobo) },
    source: `referral:${event.inviteeId}`,
  };
}

function scheduleRunSkipped(event: EventOf<'schedule.run_skipped'>): NotificationMessage {
  const what = inSentence(serviceNames[event.service] ?? event.service);
  return {
    userId: event.userId,
    kind: 'schedule_skipped',
    title: event.paused ? 'Scheduled purchase paused' : 'Scheduled purchase skipped',
    body: event.paused
      ? `Your wallet could not cover your scheduled ${what} purchase of ${kobo(event.amountKobo)}, ${event.skipsInRow} times in a row, so the schedule is paused. Fund your wallet and resume it.`
      : `${
          event.reason === undefined
            ? `Your wallet could not cover your scheduled ${what} purchase of ${kobo(event.amountKobo)}`
            : `Your scheduled ${what} purchase of ${kobo(event.amountKobo)} was not made (${event.reason})`
        }, so this run was skipped. ${
          event.ended === true
            ? 'It was the last one, so the schedule has ended.'
            : 'It will try again at its next time.'
        }`,
    data: {
      scheduleId: event.scheduleId,
      dueAt: event.dueAt,
      amount: kobo(event.amountKobo),
      ...(event.reason === undefined ? {} : { reason: event.reason }),
    },
    source: `schedule-run:${event.scheduleId}:${event.dueAt}`,
  };
}

function schedulePaused(event: EventOf<'schedule.paused'>): NotificationMessage {
  const what = inSentence(serviceNames[event.service] ?? event.service);
  return {
    userId: event.userId,
    kind: 'schedule_paused',
    title: 'Scheduled purchase paused',
    body: `Your scheduled ${what} purchase was not made and the schedule is paused: ${event.reason}. Check it and resume it when you are ready.`,
    data: { scheduleId: event.scheduleId, dueAt: event.dueAt, reason: event.reason },
    source: `schedule-run:${event.scheduleId}:${event.dueAt}`,
  };
}

function kycTierApproved(event: EventOf<'kyc.tier_approved'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'kyc_approved',
    title: `Tier ${event.tier} approved`,
    body: `Your identity check for tier ${event.tier} was approved.`,
    data: { tier: event.tier },
    source: `kyc-approved:${event.tier}`,
  };
}

function kycTierRejected(event: EventOf<'kyc.tier_rejected'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'kyc_rejected',
    title: `Tier ${event.tier} not approved`,
    body: `Your identity check for tier ${event.tier} was not approved: ${event.reason}`,
    data: { tier: event.tier, reason: event.reason },
    // A tier can be rejected, resubmitted and rejected again: each decision is its own fact.
    source: `kyc-rejected:${event.tier}:${event.occurredAt}`,
  };
}

function dataExportReady(event: EventOf<'data_export.ready'>): NotificationMessage {
  return {
    userId: event.userId,
    kind: 'data_export_ready',
    title: 'Your data is ready to download',
    body: `The copy of your data you asked for is ready. Download it from Settings before ${lagosDay.format(new Date(event.expiresAt))}, when it is deleted.`,
    data: { exportId: event.exportId, expiresAt: event.expiresAt },
    source: `data-export:${event.exportId}`,
  };
}
