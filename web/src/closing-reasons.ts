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

/** The least anything sold costs: airtime from ₦50 (the airtime screen's floor). */
const smallestPurchaseNaira = 50;

/** The reasons whose step is the same whatever the balances: a thing to wait for or to cancel. */
const fixedSteps: Readonly<Record<string, Omit<ClosingStep, 'reason'>>> = {
  purchases_processing: {
    text: 'Wait for your purchases that are still processing to finish.',
    link: { to: '/transactions', label: 'See your history' },
  },
  open_dispute: {
    text: 'Wait for the answer to a problem you reported: we will tell you when it is resolved.',
  },
  active_savings: {
    text: 'Wait for your savings locks to mature, or break them, so the money is back in your wallet.',
    link: { to: '/savings', label: 'See your savings' },
  },
  active_schedules: {
    text: 'Cancel your scheduled purchases.',
    link: { to: '/schedules', label: 'See your schedules' },
  },
};

const otherwise = 'Something else about your account needs to be settled first: contact support.';

function balanceStep(wallet: Balances, tier: number | undefined): Omit<ClosingStep, 'reason'> {
  const balance = wallet?.balance ?? 0;
  // Sending money needs Tier 2; below it, buying is the way to spend it, unless too little is left
  // to buy anything: then Tier 2 (to send it) or support is the way out.
  if (tier !== undefined && tier >= 2) {
    return {
      text:
        balance > 0
          ? `Spend or transfer your ${formatNairaNumber(balance)} balance.`
          : 'Spend or transfer the money in your wallet.',
      link: { to: '/transfer', label: 'Send money' },
    };
  }
  if (balance > 0 && balance < smallestPurchaseNaira) {
    return {
      text: `Your ${formatNairaNumber(balance)} is less than the smallest purchase (${formatNairaNumber(smallestPurchaseNaira)} of airtime). Verify for Tier 2 to send it to someone, or contact support to have it paid out.`,
      link: { to: '/verify', label: 'Verify your identity' },
    };
  }
  return {
    text:
      balance > 0
        ? `Spend or transfer your ${formatNairaNumber(balance)} balance.`
        : 'Spend or transfer the money in your wallet.',
    link: { to: '/buy', label: 'Buy something' },
  };
}

export function closingSteps(
  reasons: readonly string[],
  wallet: Balances,
  tier: number | undefined,
): ClosingStep[] {
  return reasons.map((reason): ClosingStep => {
    if (reason === 'balance_not_zero') return { reason, ...balanceStep(wallet, tier) };
    if (reason === 'held_balance') {
      const held =
        wallet?.heldBalance !== undefined && wallet.heldBalance > 0
          ? formatNairaNumber(wallet.heldBalance)
          : 'Money';
      return {
        reason,
        text: `${held} is held over your tier’s maximum balance. Verify for the next tier to release it into your balance, then spend or transfer it.`,
        link: { to: '/verify', label: 'Verify your identity' },
      };
    }
    return { reason, ...(fixedSteps[reason] ?? { text: otherwise }) };
  });
}
