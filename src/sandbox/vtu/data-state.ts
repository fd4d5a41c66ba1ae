import assert from 'node:assert/strict';
import { type SandboxDataPlan, type SandboxNetwork, sandboxDataPlans } from './data-catalogue.ts';

// What the sandbox data vendor remembers: our wallet at the vendor, its plan catalogue and every order
// placed, in memory for the life of the process. Tests may change any of it directly.

/** The API token the sandbox vendor accepts (a DRF token is 40 hex digits). */
export const SANDBOX_DATA_TOKEN = '5d1a7c0e9b3f4a6d8e2c1b0a9f8e7d6c5b4a3f2e';

/** The wallet a fresh sandbox vendor starts with: ₦1,000,000. */
export const sandboxDataInitialBalanceKobo = 100_000_000n;
/** How long a purchase to a number ending in 4 is left unanswered before its connection is dropped. */
export const sandboxDataTimeoutHoldMs = 30_000;

export type SandboxDataOrderStatus = 'successful' | 'pending' | 'failed';

export type SandboxDataOrder = {
  id: number;
  kind: 'data' | 'topup';
  /** The client's reference, when it sent one. */
  ident: string | null;
  network: SandboxNetwork;
  networkId: number;
  mobileNumber: string;
  ported: boolean;
  /** Data: the plan bought. */
  plan: SandboxDataPlan | null;
  /** Airtime: the face value. */
  amountKobo: bigint | null;
  /** What the wallet paid (or would have paid, for an order that failed at once). */
  priceKobo: bigint;
  status: SandboxDataOrderStatus;
  /** A pending order's final state, applied by the first read of the order after the purchase. */
  settlesAs: 'successful' | 'failed' | null;
  apiResponse: string;
  balanceBeforeKobo: bigint;
  balanceAfterKobo: bigint;
  createdAt: Date;
};

export type SandboxDataState = {
  balanceKobo: bigint;
  plans: SandboxDataPlan[];
  /** The vendor's network ids (DataStation's by default; some vendors swap them). */
  networkIds: Record<SandboxNetwork, number>;
  /** Airtime is sold at this percentage of its face value. */
  topupPercent: bigint;
  /** Every order, data and airtime, oldest first; ids are unique across both. */
  orders: SandboxDataOrder[];
  nextOrderId: number;
  timeoutHoldMs: number;
};

export function createSandboxDataState(): SandboxDataState {
  return {
    balanceKobo: sandboxDataInitialBalanceKobo,
    plans: sandboxDataPlans(),
    networkIds: { MTN: 1, GLO: 2, '9MOBILE': 3, AIRTEL: 4 },
    topupPercent: 98n,
    orders: [],
    nextOrderId: 48_213_001,
    timeoutHoldMs: sandboxDataTimeoutHoldMs,
  };
}

/** Money arriving in the vendor's bank account tops up our wallet there (the sandbox payment provider calls this). */
export function fundSandboxData(state: SandboxDataState, kobo: bigint): void {
  assert.ok(kobo > 0n, `a funding of ${kobo} kobo is not positive`);
  state.balanceKobo += kobo;
}
