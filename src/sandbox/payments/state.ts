// What the sandbox payment provider remembers (part of SandboxState, src/sandbox/state.ts): the
// records a Paystack test integration would hold, kept in memory for the life of the process.

/** Webhook retry delays, after the first attempt: 1 + 7 = 8 attempts over about two minutes. */
export const webhookRetryDelaysMs: readonly number[] = [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000];
/** How long one webhook attempt may take before it counts as failed (Paystack allows 30 s). */
export const webhookAttemptTimeoutMs = 10_000;
/** A transfer stays pending this long before it settles. */
export const transferSettleDelayMs = 500;
/** A transfer to an account number ending in 2 is reversed this long after it succeeded. */
export const transferReversalDelayMs = 2_000;
/** The transfer balance a fresh sandbox starts with: ₦10,000,000. */
export const initialBalanceKobo = 1_000_000_000n;
/** List Banks' largest page in the sandbox: perPage asks for fewer, never more. */
export const bankPageSizeMax = 100;
/** Delivery records kept for GET /__sandbox/webhooks and tests; the oldest go first. */
export const webhookDeliveriesMax = 1_000;

export type SandboxCustomer = {
  id: number;
  customerCode: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  phone: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export type SandboxTransaction = {
  id: number;
  reference: string;
  accessCode: string;
  amountKobo: bigint;
  customerCode: string;
  status: 'abandoned' | 'success' | 'failed';
  channel: 'card' | 'dedicated_nuban';
  callbackUrl: string | null;
  metadata: Record<string, unknown> | null;
  /** The paying account: set when the money came into a dedicated account. */
  dedicatedAccountNumber: string | null;
  authorizationCode: string;
  createdAt: Date;
  paidAt: Date | null;
};

export type SandboxDedicatedAccount = {
  id: number;
  accountNumber: string;
  accountName: string;
  customerCode: string;
  createdAt: Date;
};

export type SandboxRecipient = {
  id: number;
  recipientCode: string;
  name: string;
  accountNumber: string;
  accountName: string;
  bankCode: string;
  bankName: string;
  createdAt: Date;
};

export type SandboxTransfer = {
  id: number;
  reference: string;
  transferCode: string;
  amountKobo: bigint;
  recipientCode: string;
  reason: string;
  status: 'pending' | 'success' | 'failed' | 'reversed';
  /** Why it failed or was reversed (Paystack's gateway_response); null while it goes well. */
  gatewayResponse: string | null;
  createdAt: Date;
  updatedAt: Date;
  transferredAt: Date | null;
};

export type SandboxWebhookAttempt = { at: string; httpStatus: number | null; error: string | null };

export type SandboxWebhookDelivery = {
  id: number;
  event: string;
  /** The transaction's or transfer's reference. */
  reference: string;
  url: string;
  /** dropped: webhook mode was "drop"; stopped: the sandbox closed before delivery ended. */
  status: 'dropped' | 'delivering' | 'delivered' | 'failed' | 'stopped';
  attempts: SandboxWebhookAttempt[];
  /** Settles when the delivery ends, whichever way (it never rejects). */
  settled: Promise<void>;
};

export type SandboxPaymentsState = {
  transactions: Map<string, SandboxTransaction>;
  /** By customer code; customersByEmail maps a lower-cased email to its code. */
  customers: Map<string, SandboxCustomer>;
  customersByEmail: Map<string, string>;
  /** By account number. */
  dedicatedAccounts: Map<string, SandboxDedicatedAccount>;
  /** By recipient code. */
  recipients: Map<string, SandboxRecipient>;
  /** By reference. */
  transfers: Map<string, SandboxTransfer>;
  /** NGN available for transfers (POST /__sandbox/payments/balance sets it). */
  balanceKobo: bigint;
  webhookMode: 'deliver' | 'drop';
  /** Where webhooks go instead of the service's endpoint (tests point it at their own receiver). */
  webhookUrlOverride: string | undefined;
  webhookRetryDelaysMs: readonly number[];
  webhookAttemptTimeoutMs: number;
  transferSettleDelayMs: number;
  transferReversalDelayMs: number;
  webhookDeliveries: SandboxWebhookDelivery[];
  /** List Banks' largest page, whatever perPage asks (tests lower it to make the list span pages). */
  bankPageSizeMax: number;
  /** The last id handed out, for every kind of record (Paystack ids are integers). */
  lastId: number;
};

export function createSandboxPaymentsState(): SandboxPaymentsState {
  return {
    transactions: new Map(),
    customers: new Map(),
    customersByEmail: new Map(),
    dedicatedAccounts: new Map(),
    recipients: new Map(),
    transfers: new Map(),
    balanceKobo: initialBalanceKobo,
    webhookMode: 'deliver',
    webhookUrlOverride: undefined,
    webhookRetryDelaysMs,
    webhookAttemptTimeoutMs,
    transferSettleDelayMs,
    transferReversalDelayMs,
    webhookDeliveries: [],
    bankPageSizeMax,
    lastId: 1_000_000,
  };
}
