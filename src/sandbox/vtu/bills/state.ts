import assert from 'node:assert/strict';

// What the sandbox bills provider (VTpass's API, ../bills.ts) remembers: its balance and its orders,
// in memory for the life of the process, and the credentials it expects.

export const SANDBOX_BILLS_API_KEY = 'sandbox-bills-api-key';
export const SANDBOX_BILLS_PUBLIC_KEY = 'PK_sandbox_bills_public';
export const SANDBOX_BILLS_SECRET_KEY = 'SK_sandbox_bills_secret';

const startBalanceKobo = 100_000_000n;
const defaultTimeoutHoldMs = 30_000;

export type OrderStatus = 'delivered' | 'pending' | 'failed';

export type SandboxBillsOrder = {
  requestId: string;
  transactionId: string;
  serviceID: string;
  productName: string;
  /** The number the outcome digit was read from. */
  recipient: string;
  phone: string | null;
  amountKobo: bigint;
  /** What the balance paid (0 when the order was never charged). */
  chargedKobo: bigint;
  quantity: number;
  status: OrderStatus;
  /** What the next requery turns a pending order into. */
  settlesTo: 'delivered' | 'failed' | null;
  /** Product fields a delivered order answers with (token, cards, ...). */
  extras: Record<string, unknown>;
  /**
   * The token or pins a delivered order has not released yet (digit 6): its answers carry the
   * product fields emptied until the next requery, which answers with these.
   */
  withheld: Record<string, unknown> | null;
  createdAt: Date;
};

export type SandboxBillsState = {
  balanceKobo: bigint;
  orders: Map<string, SandboxBillsOrder>;
  /** How long a timeout-digit purchase is held open before its socket is destroyed. */
  timeoutHoldMs: number;
  nextTransactionNumber: number;
};

export function createSandboxBillsState(): SandboxBillsState {
  return {
    balanceKobo: startBalanceKobo,
    orders: new Map(),
    timeoutHoldMs: defaultTimeoutHoldMs,
    nextTransactionNumber: 1,
  };
}

/** Money arriving in the provider's bank account (a transfer from the service's float top-up). */
export function fundSandboxBills(state: SandboxBillsState, kobo: bigint): void {
  assert.ok(kobo > 0n, `a funding is positive: ${kobo}`);
  state.balanceKobo += kobo;
}
