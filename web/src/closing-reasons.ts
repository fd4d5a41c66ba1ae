import { formatNairaNumber } from './format.ts';

// What stops an account from closing (API.md 17.3: requestAccountDeletion's 409 CONFLICT lists every
// reason that applies in `details.reasons`), each said as something the person can do, with the
// screen that does it where one helps. A plain module, so the words are tested without a browser.

export type ClosingStep = {
  reason: string;
  text: string;
  link?: {
    to: '/transfer' | '/buy' | '/verify' | '/transactions' | '/savings' | '/schedules';
    label: string;
  };
};

/** The person's balances as the wallet last said, for the amounts in the words. */
type Balances = { balance: number; heldBalance?: number } | undefined;

export function closingSteps(
  reasons: readonly string[],
  wallet: Balances,
  tier: number | undefined,
): ClosingStep[] {
  return reasons.map((reason): ClosingStep => {
    switch (reason) {
      case 'balance_not_zero':
        return {
          reason,
          text:
            wallet !== undefined && wallet.balance > 0
              ? `Spend or transfer your ${formatNairaNumber(wallet.balance)} balance.`
              : 'Spend or transfer the money in your wallet.',
          // Sending money needs Tier 2; below it, buying is the way to spend it.
          link:
            tier !== undefined && tier >= 2
              ? { to: '/transfer', label: 'Send money' }
              : { to: '/buy', label: 'Buy something' },
        };
      case 'held_balance':
        return {
          reason,
          text: `${
            wallet?.heldBalance !== undefined && wallet.heldBalance > 0
              ? formatNairaNumber(wallet.heldBalance)
              : 'Money'
          } is held over your tier’s maximum balance. Verify for the next tier to release it into your balance, then spend or transfer it.`,
          link: { to: '/verify', label: 'Verify your identity' },
        };
      case 'purchases_processing':
        return {
          reason,
          text: 'Wait for your purchases that are still processing to finish.',
          link: { to: '/transactions', label: 'See your history' },
        };
      case 'open_dispute':
        return {
          reason,
          text: 'Wait for the answer to a problem you reported: we will tell you when it is resolved.',
        };
      case 'active_savings':
        return {
          reason,
          text: 'Wait for your savings locks to mature, or break them, so the money is back in your wallet.',
          link: { to: '/savings', label: 'See your savings' },
        };
      case 'active_schedules':
        return {
          reason,
          text: 'Cancel your scheduled purchases.',
          link: { to: '/schedules', label: 'See your schedules' },
        };
      default:
        return {
          reason,
          text: 'Something else about your account needs to be settled first: contact support.',
        };
    }
  });
}
