// The payment provider (Paystack's REST API, shared/reference/providers.md section 1): money in
// through checkout and dedicated virtual accounts, money out through transfers (just-in-time
// funding of the VTU providers' floats). Amounts are integer kobo as bigint. "Transfer" here is
// Paystack's word (its Transfer API and transfer.* webhooks), kept as the wire protocol says it; the
// domain calls the same money a float top-up and a payment in a bank deposit (decision 0038).
//
// Every failure says whether its outcome is definite. A definite failure (the provider answered
// and refused: a 4xx with status:false) means nothing happened; an indefinite one (timeout,
// network error, 5xx, an unreadable answer) means the request may or may not have taken effect,
// and the caller must find out (verify by reference) before acting on it.

export type TransactionStatus =
  | 'success'
  | 'failed'
  | 'abandoned'
  | 'reversed'
  | 'ongoing'
  | 'pending'
  | 'processing'
  | 'queued';

export type VerifiedTransaction = {
  /** Paystack's numeric id of the transaction (what GET /transaction/:id takes). */
  id: number;
  reference: string;
  status: TransactionStatus;
  amountKobo: bigint;
  currency: string;
  paidAt: Date | null;
  channel: string | null;
  customerEmail: string | null;
  customerCode: string | null;
  gatewayResponse: string | null;
  /** The dedicated account the money was sent to (channel dedicated_nuban); null otherwise. */
  receiverAccountNumber: string | null;
  /** When the transaction was made (initialized, or the money arrived): what the list's dates filter on. */
  createdAt: Date;
  /**
   * The string values of the transaction's metadata (what initialize sent, e.g. the top-up's userId);
   * {} when it has none. Values of other types are left out: nothing here reads them.
   */
  metadata: Record<string, string>;
};

/** The statuses List Transactions filters on (Paystack's enum for its `status` parameter). */
export type ListedTransactionStatus = 'success' | 'failed' | 'abandoned' | 'reversed';
/** The channels List Transactions filters on (Paystack's enum for its `channel` parameter). */
export type ListedTransactionChannel = 'card' | 'pos' | 'bank' | 'dedicated_nuban' | 'ussd' | 'bank_transfer';

export type TransferStatus =
  | 'pending'
  | 'success'
  | 'reversed'
  | 'failed'
  | 'otp'
  | 'abandoned'
  | 'blocked'
  | 'rejected'
  | 'received';

export type Transfer = {
  reference: string;
  transferCode: string;
  status: TransferStatus;
  amountKobo: bigint;
  reason: string | null;
};

export type DedicatedAccount = {
  accountNumber: string;
  accountName: string;
  bankName: string;
  providerSlug: string;
  customerCode: string;
};

/** One entry of the provider's bank list, as the provider describes it. */
export type ProviderBank = {
  /** The bank's NIP / CBN code: what a resolve or a transfer recipient names the bank by. */
  code: string;
  name: string;
  /** False for a bank the provider no longer serves (inactive or deleted). */
  active: boolean;
  /** The account scheme (`nuban` for Nigerian bank accounts). */
  type: string;
  country: string;
  currency: string;
};

export type PaymentProvider = {
  initializeTransaction(request: {
    reference: string;
    amountKobo: bigint;
    email: string;
    callbackUrl?: string;
    metadata?: Record<string, string>;
  }): Promise<{ authorizationUrl: string; accessCode: string; reference: string }>;
  /** null when the provider does not know the reference. */
  verifyTransaction(reference: string): Promise<VerifiedTransaction | null>;
  /** The transaction with Paystack's numeric id; null when the provider knows no such id. */
  fetchTransaction(id: number): Promise<VerifiedTransaction | null>;
  /**
   * One page of the integration's transactions created between `from` and `to` (both included),
   * newest first, of one status and one channel when given, of every one when not; pages count from
   * 1. Funding finds transfers into dedicated accounts with it; the daily reconciliation lists a
   * whole day, every status.
   */
  listTransactions(request: {
    from: Date;
    to: Date;
    status?: ListedTransactionStatus;
    channel?: ListedTransactionChannel;
    page: number;
    perPage: number;
  }): Promise<{ transactions: VerifiedTransaction[]; pageCount: number }>;
  createCustomer(request: {
    email: string;
    firstName: string;
    lastName: string;
    phone: string;
  }): Promise<{ customerCode: string }>;
  createDedicatedAccount(request: { customerCode: string; preferredBank: string }): Promise<DedicatedAccount>;
  resolveAccount(request: {
    accountNumber: string;
    bankCode: string;
  }): Promise<{ accountNumber: string; accountName: string } | null>;
  createTransferRecipient(request: {
    name: string;
    accountNumber: string;
    bankCode: string;
  }): Promise<{ recipientCode: string }>;
  initiateTransfer(request: {
    reference: string;
    amountKobo: bigint;
    recipientCode: string;
    reason: string;
  }): Promise<Transfer>;
  /** null when the provider does not know the reference. */
  verifyTransfer(reference: string): Promise<Transfer | null>;
  /** The NGN balance available for transfers. */
  balance(): Promise<{ balanceKobo: bigint }>;
  /** The provider's list of Nigerian banks, every page of it, as the provider lists them. */
  listBanks(): Promise<ProviderBank[]>;
};

export class PaymentProviderError extends Error {
  override name = 'PaymentProviderError';
  /** True when the provider answered and refused: nothing happened. False: outcome unknown. */
  readonly definite: boolean;
  readonly httpStatus: number | null;
  constructor(message: string, options: { definite: boolean; httpStatus?: number | null; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.definite = options.definite;
    this.httpStatus = options.httpStatus ?? null;
  }
}
