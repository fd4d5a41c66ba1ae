import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closingSteps } from '../../web/src/closing-reasons.ts';

// The web client's words for the account's limits and the data rights (API.md 17.2, 17.3): plain
// functions, tested without a browser; the screens that show them are driven in
// test/web/limits-journey.test.ts.

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
    assert.equal(closingSteps(['balance_not_zero'], { balance: 10, heldBalance: 0 }, 1)[0]?.link?.to, '/buy');
  });
});
