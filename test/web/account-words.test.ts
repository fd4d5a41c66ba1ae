import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeError } from '../../web/src/api/errors.ts';
import { closingSteps } from '../../web/src/closing-reasons.ts';
import {
  describeFundingHeld,
  describeHeld,
  describeLimitChange,
  describeOverLimit,
  describePendingLimit,
  type Limits,
  overDailyLimit,
  overLimitOfRefusal,
  ownLimitBinds,
} from '../../web/src/payments/limits.ts';

// The web client's words for the account limits and the data rights (API.md 17.2, 17.3): a payment
// over the day's room, before the PIN and after the service's 403; a held balance and what releases
// it; a change of the person's own limit; and what stops an account from closing. Plain functions,
// tested without a browser; the screens that show them are driven in test/web/limits-journey.test.ts.

/** A Tier 1 person at the CBN defaults who has spent ₦45,000 today (midnight in Lagos is 23:00 UTC). */
const tier1: Limits = {
  tier: 1,
  dailyDebitLimit: 50_000,
  dailyDebitUsed: 45_000,
  dailyDebitRemaining: 5_000,
  maxBalance: 300_000,
  heldBalance: 0,
  dayResetsAt: '2026-11-29T23:00:00.000Z',
  personalDailyLimit: null,
  nextTier: { tier: 2, dailyDebitLimit: 200_000, maxBalance: 500_000 },
};

describe('the web client’s words for the account limits', () => {
  it('calls the daily limit the person’s own only when their own one binds, never for a tier without one', () => {
    assert.equal(ownLimitBinds(tier1), false);
    assert.equal(ownLimitBinds({ ...tier1, personalDailyLimit: 20_000, dailyDebitLimit: 20_000 }), true);
    const tier3 = { ...tier1, tier: 3, dailyDebitLimit: null, dailyDebitRemaining: null, maxBalance: null };
    assert.equal(
      ownLimitBinds({ ...tier3, personalDailyLimit: null }),
      false,
      'no limit at all is not their own',
    );
  });

  it('explains a payment over the day’s room before the PIN: what is left and the tier that lifts it', () => {
    assert.equal(overDailyLimit(tier1, 5_000), null, 'exactly what is left is allowed');
    const over = overDailyLimit(tier1, 5_000.01);
    assert.ok(over);
    assert.deepEqual(describeOverLimit(over, false), [
      'This is over your daily limit of ₦50,000.00: ₦5,000.00 left today; Tier 2 lifts it to ₦200,000.00.',
      'Your daily limit starts again on 30 Nov 2026, 00:00 (Lagos time).',
    ]);
  });

  it('names the person’s own lower limit as the one that stops it, without a tier that would not help', () => {
    // The view's daily limit is the tighter of the tier's and the person's own.
    const own = { ...tier1, personalDailyLimit: 20_000, dailyDebitLimit: 20_000, dailyDebitUsed: 15_000 };
    const over = overDailyLimit(own, 6_000);
    assert.ok(over);
    assert.equal(over.own, true);
    assert.equal(over.upgrade, null);
    assert.match(
      describeOverLimit(over, false)[0]!,
      /^This is over the daily limit you set of ₦20,000\.00: ₦5,000\.00 left today\./,
    );
  });

  it('reads the service’s 403 LIMIT_EXCEEDED, and says nothing was charged', () => {
    const refusal = {
      code: 'LIMIT_EXCEEDED',
      message: 'over the daily debit limit',
      status: 403,
      details: { limit: 'daily_debit', limitAmount: 50_000, remaining: 0, upgradeTier: 2 },
    };
    const over = overLimitOfRefusal(refusal, tier1);
    assert.ok(over);
    assert.equal(
      describeOverLimit(over, true)[0],
      'This is over your daily limit of ₦50,000.00: nothing left today; Tier 2 lifts it to ₦200,000.00. Nothing was charged.',
    );
    assert.equal(overLimitOfRefusal({ ...refusal, code: 'INSUFFICIENT_FUNDS' }, tier1), null);
    // Where a screen has no limits to hand, the error's own words.
    assert.equal(
      describeError(refusal),
      'You have used all of your daily limit of ₦50,000.00 today. Nothing was charged. Tier 2 verification raises the limit.',
    );
    assert.equal(
      describeError({
        ...refusal,
        details: { limit: 'daily_debit', limitAmount: 5_000_000, remaining: 1_000 },
      }),
      'That is over your daily limit of ₦5,000,000.00: ₦1,000.00 is left today. Nothing was charged.',
    );
  });

  it('says how much is held over the maximum, and that the next tier releases it', () => {
    assert.equal(describeHeld(0, tier1), null);
    assert.deepEqual(describeHeld(100_000, { ...tier1, heldBalance: 100_000 }), {
      held: '₦100,000.00 held: over your Tier 1 maximum of ₦300,000.00.',
      release:
        'It cannot be spent yet. It moves into your balance by itself when you complete Tier 2 verification (a maximum of ₦500,000.00), or once your balance falls far enough below the maximum.',
      verifyTier: 2,
    });
  });

  it('says before paying how much of a funding would be held over the maximum', () => {
    assert.equal(describeFundingHeld(tier1, 0, 300_000), null, 'up to the maximum all of it is spendable');
    assert.equal(
      describeFundingHeld(tier1, 0, 400_000),
      '₦100,000.00 of this will be held, not spendable: over your Tier 1 maximum balance of ₦300,000.00. It moves into your balance when you complete Tier 2 verification.',
    );
    assert.match(describeFundingHeld(tier1, 299_999.9, 0.3) ?? '', /^₦0\.20 of this will be held/);
    assert.equal(describeFundingHeld({ ...tier1, maxBalance: null }, 0, 9_000_000), null);
  });

  it('says a lower limit of one’s own applies now and a higher one (or none) from tomorrow', () => {
    assert.deepEqual(describeLimitChange(tier1, 20_000), {
      raise: false,
      words: 'Your daily limit becomes ₦20,000.00 now.',
    });
    assert.deepEqual(describeLimitChange(tier1, 50_000), {
      refusal: 'Your tier’s limit is ₦50,000.00 a day: type a lower amount to set a limit of your own.',
    });
    assert.equal(describeLimitChange(tier1, null), null, 'no limit of one’s own to remove');
    const own = { ...tier1, personalDailyLimit: 20_000, dailyDebitLimit: 20_000 };
    assert.deepEqual(describeLimitChange(own, 10_000), {
      raise: false,
      words: 'Your daily limit becomes ₦10,000.00 now.',
    });
    assert.deepEqual(describeLimitChange(own, 30_000), {
      raise: true,
      words: 'From tomorrow your daily limit is ₦30,000.00. Until then it stays ₦20,000.00.',
    });
    assert.deepEqual(describeLimitChange(own, null), {
      raise: true,
      words: 'From tomorrow your tier’s limit applies again. Until then your limit stays ₦20,000.00.',
    });
    assert.equal(describeLimitChange(own, 20_000), null, 'the same limit changes nothing');
    // A raise waiting for the next Lagos day.
    const waiting = { ...own, pendingPersonalDailyLimit: { amount: 30_000, from: tier1.dayResetsAt } };
    assert.equal(
      describePendingLimit(waiting),
      'From 30 Nov 2026, 00:00 (Lagos time) your daily limit is ₦30,000.00.',
    );
    assert.equal(describePendingLimit(own), null);
  });
});

describe('the web client’s words for what stops an account from closing', () => {
  it('says each reason as a thing to do, with the screen that does it', () => {
    const steps = closingSteps(
      [
        'balance_not_zero',
        'held_balance',
        'purchases_processing',
        'open_dispute',
        'active_savings',
        'active_schedules',
      ],
      { balance: 2_500, heldBalance: 100_000 },
      2,
    );
    assert.deepEqual(
      steps.map((step) => [step.text, step.link?.to]),
      [
        ['Spend or transfer your ₦2,500.00 balance.', '/transfer'],
        [
          '₦100,000.00 is held over your tier’s maximum balance. Verify for the next tier to release it into your balance, then spend or transfer it.',
          '/verify',
        ],
        ['Wait for your purchases that are still processing to finish.', '/transactions'],
        ['Wait for the answer to a problem you reported: we will tell you when it is resolved.', undefined],
        [
          'Wait for your savings locks to mature, or break them, so the money is back in your wallet.',
          '/savings',
        ],
        ['Cancel your scheduled purchases.', '/schedules'],
      ],
    );
    // Below Tier 2 money cannot be sent: buying is the way to spend it.
    assert.equal(
      closingSteps(['balance_not_zero'], { balance: 500, heldBalance: 0 }, 1)[0]?.link?.to,
      '/buy',
    );
    // Unless less is left than anything costs: Tier 2 (to send it) or support is the way out.
    const [left] = closingSteps(['balance_not_zero'], { balance: 37.5, heldBalance: 0 }, 1);
    assert.deepEqual(
      [left?.text, left?.link?.to],
      [
        'Your ₦37.50 is less than the smallest purchase (₦50.00 of airtime). Verify for Tier 2 to send it to someone, or contact support to have it paid out.',
        '/verify',
      ],
    );
    assert.equal(
      closingSteps(['something_new'], undefined, 1)[0]?.text,
      'Something else about your account needs to be settled first: contact support.',
    );
  });
});
