import { randomBytes } from 'node:crypto';
import type {
  SandboxCustomer,
  SandboxDedicatedAccount,
  SandboxPaymentsState,
  SandboxRecipient,
  SandboxTransaction,
  SandboxTransfer,
} from './state.ts';

// Paystack's JSON for the sandbox's records, field for field as the response schemas of
// shared/reference/paystack-openapi.yaml require them (test/payments/paystack-openapi.test.ts holds the
// answers to those schemas). Where Paystack would send null but the schema says "string", the field is
// left out when the schema does not require it, else an empty string is sent.

export const integrationId = 100_032;
export const dedicatedBank = { id: 9_000, name: 'Test Bank', slug: 'test-bank' } as const;
/** Who sends money into a dedicated account in the sandbox. */
const sender = { name: 'SANDBOX SENDER', bank: 'Sandbox Bank', accountNumber: 'XXXXXX4553' } as const;

/** One entry of Paystack's List Banks, as the sandbox keeps it. */
export type SandboxBank = {
  id: number;
  name: string;
  slug: string;
  /** The NIP / CBN code; `longcode` is the sort code, when the bank has one. */
  code: string;
  longcode: string;
  active: boolean;
  isDeleted: boolean;
};

const bank = (id: number, name: string, slug: string, code: string, longcode = code): SandboxBank => ({
  id,
  name,
  slug,
  code,
  longcode,
  active: true,
  isDeleted: false,
});

/**
 * The sandbox's Nigerian banks, in Paystack's order (by id), as List Banks answers them. Like
 * Paystack's own list it holds a retired bank (Diamond Bank, merged into Access Bank: inactive and
 * deleted, its code now Access Bank (Diamond)'s) and one bank listed twice under two names (Kuda), so
 * a client has to filter and deduplicate it.
 */
export const sandboxBanks: readonly SandboxBank[] = [
  bank(1, 'Access Bank', 'access-bank', '044', '044150149'),
  { ...bank(2, 'Diamond Bank', 'diamond-bank', '063', '063150162'), active: false, isDeleted: true },
  bank(3, 'Access Bank (Diamond)', 'access-bank-diamond', '063', '063150162'),
  bank(4, 'Citibank Nigeria', 'citibank-nigeria', '023', '023150005'),
  bank(5, 'Ecobank Nigeria', 'ecobank-nigeria', '050', '050150010'),
  bank(6, 'Fidelity Bank', 'fidelity-bank', '070', '070150003'),
  bank(7, 'First Bank of Nigeria', 'first-bank-of-nigeria', '011', '011151003'),
  bank(8, 'First City Monument Bank', 'first-city-monument-bank', '214', '214150018'),
  bank(9, 'Guaranty Trust Bank', 'guaranty-trust-bank', '058', '058152036'),
  bank(10, 'Heritage Bank', 'heritage-bank', '030', '030159992'),
  bank(11, 'Keystone Bank', 'keystone-bank', '082', '082150017'),
  bank(12, 'Polaris Bank', 'polaris-bank', '076', '076151006'),
  bank(13, 'Providus Bank', 'providus-bank', '101'),
  bank(14, 'Stanbic IBTC Bank', 'stanbic-ibtc-bank', '221', '221159522'),
  bank(15, 'Standard Chartered Bank', 'standard-chartered-bank', '068', '068150015'),
  bank(16, 'Sterling Bank', 'sterling-bank', '232', '232150016'),
  bank(17, 'Union Bank of Nigeria', 'union-bank-of-nigeria', '032', '032080474'),
  bank(18, 'United Bank For Africa', 'united-bank-for-africa', '033', '033153513'),
  bank(19, 'Unity Bank', 'unity-bank', '215', '215154097'),
  bank(20, 'Wema Bank', 'wema-bank', '035', '035150103'),
  bank(21, 'Zenith Bank', 'zenith-bank', '057', '057150013'),
  bank(22, 'Jaiz Bank', 'jaiz-bank', '301', '301080020'),
  bank(67, 'Kuda Bank', 'kuda-bank', '50211'),
  bank(171, 'Moniepoint MFB', 'moniepoint-mfb-ng', '50515'),
  bank(286, 'PalmPay', 'palmpay', '999991'),
  bank(287, 'OPay Digital Services Limited (OPay)', 'paycom', '999992'),
  bank(302, '9mobile 9Payment Service Bank', '9mobile-9payment-service-bank-ng', '120001'),
  bank(303, 'Kuda Microfinance Bank', 'kuda-microfinance-bank', '50211'),
];

/**
 * Banks the sandbox resolves accounts at and makes transfer recipients for, by NIP code: the active
 * ones of sandboxBanks, the first listed for a code.
 */
export const banks: ReadonlyMap<string, { id: number; name: string }> = new Map(
  sandboxBanks
    .filter((b) => b.active && !b.isDeleted)
    .toReversed()
    .map((b): [string, { id: number; name: string }] => [b.code, { id: b.id, name: b.name }]),
);

/** A bank as List Banks answers it (MiscellaneousListBanksResponseArray). */
export function bankJson(entry: SandboxBank) {
  // Paystack's list was made long ago and changes rarely: fixed dates, not the sandbox clock.
  const at = '2016-07-14T10:04:29.000Z';
  return {
    id: entry.id,
    name: entry.name,
    slug: entry.slug,
    code: entry.code,
    longcode: entry.longcode,
    gateway: entry.longcode === entry.code ? null : 'emandate',
    pay_with_bank: false,
    supports_transfer: entry.active,
    available_for_direct_debit: false,
    active: entry.active,
    is_deleted: entry.isDeleted,
    country: 'Nigeria',
    currency: 'NGN',
    type: 'nuban',
    createdAt: at,
    updatedAt: at,
  };
}

export const nextId = (state: SandboxPaymentsState): number => {
  state.lastId += 1;
  return state.lastId;
};

/** A Paystack-style code: prefix and 15 lower-case letters and digits (CUS_, RCP_, TRF_, AUTH_). */
export function newCode(prefix: string): string {
  return `${prefix}${lowerAlphanumeric(15)}`;
}

export function lowerAlphanumeric(length: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString());
const wire = (kobo: bigint): number => Number(kobo);

/** Paystack's local card fee: 1.5% plus ₦100 from ₦2,500 up, at most ₦2,000. */
function cardFeeKobo(amount: bigint): bigint {
  const fee = (amount * 15n) / 1000n + (amount >= 250_000n ? 10_000n : 0n);
  return fee < 200_000n ? fee : 200_000n;
}

/** Paystack's dedicated-account fee: 1%, at most ₦300. */
function transferInFeeKobo(amount: bigint): bigint {
  const fee = amount / 100n;
  return fee < 30_000n ? fee : 30_000n;
}

function customerInTransaction(customer: SandboxCustomer) {
  return {
    id: customer.id,
    first_name: customer.firstName,
    last_name: customer.lastName,
    email: customer.email,
    customer_code: customer.customerCode,
    phone: customer.phone,
    metadata: null,
    risk_action: 'default',
    international_format_phone: internationalPhone(customer.phone),
  };
}

/** +234 form of a Nigerian local number (0803...); null when it is not one. */
function internationalPhone(phone: string | null): string | null {
  if (phone === null) return null;
  if (/^0\d{10}$/.test(phone)) return `+234${phone.slice(1)}`;
  return /^\+\d{8,15}$/.test(phone) ? phone : null;
}

function authorization(transaction: SandboxTransaction) {
  if (transaction.status === 'abandoned') return {};
  if (transaction.channel === 'dedicated_nuban') {
    // Money into a dedicated account: Paystack's "Managed Account" authorization, not reusable, no
    // signature (Paystack sends null; the schema types it as a string, so it is left out).
    return {
      authorization_code: transaction.authorizationCode,
      bin: 'XXXXXX',
      last4: 'XXXX',
      exp_month: '12',
      exp_year: '9999',
      channel: 'dedicated_nuban',
      card_type: 'transfer',
      bank: sender.bank,
      country_code: 'NG',
      brand: 'Managed Account',
      reusable: false,
      account_name: null,
      sender_country: 'NG',
      sender_bank: sender.bank,
      sender_bank_account_number: sender.accountNumber,
      sender_name: sender.name,
      narration: `Transfer to ${transaction.dedicatedAccountNumber}`,
      receiver_bank_account_number: transaction.dedicatedAccountNumber,
      receiver_bank: dedicatedBank.name,
    };
  }
  // Paystack's test card (4084 0840 8408 4081).
  return {
    authorization_code: transaction.authorizationCode,
    bin: '408408',
    last4: '4081',
    exp_month: '12',
    exp_year: '2030',
    channel: 'card',
    card_type: 'visa ',
    bank: 'TEST BANK',
    country_code: 'NG',
    brand: 'visa',
    reusable: true,
    signature: `SIG_${transaction.authorizationCode.slice(5)}`,
    account_name: null,
    receiver_bank_account_number: null,
    receiver_bank: null,
  };
}

const gatewayResponses = {
  abandoned: 'The transaction was not completed',
  success: 'Successful',
  failed: 'Declined',
} as const;

/** The transaction object: `data` of GET /transaction/verify (VerifyResponse) and of charge.success. */
export function transactionJson(transaction: SandboxTransaction, customer: SandboxCustomer) {
  const paid = transaction.status === 'success';
  const fees = paid
    ? transaction.channel === 'card'
      ? cardFeeKobo(transaction.amountKobo)
      : transferInFeeKobo(transaction.amountKobo)
    : null;
  return {
    id: transaction.id,
    domain: 'test',
    status: transaction.status,
    reference: transaction.reference,
    receipt_number: null,
    amount: wire(transaction.amountKobo),
    message: null,
    gateway_response: gatewayResponses[transaction.status],
    paid_at: iso(transaction.paidAt),
    created_at: iso(transaction.createdAt),
    channel: transaction.channel,
    currency: 'NGN',
    ip_address: '127.0.0.1',
    // Paystack answers "" for a transaction initialized without metadata.
    metadata: transaction.metadata ?? '',
    log: null,
    fees: fees === null ? null : wire(fees),
    fees_split: null,
    authorization: authorization(transaction),
    customer: customerInTransaction(customer),
    plan: null,
    split: {},
    order_id: null,
    paidAt: iso(transaction.paidAt),
    createdAt: iso(transaction.createdAt),
    requested_amount: wire(transaction.amountKobo),
    pos_transaction_data: null,
    source: null,
    fees_breakdown: null,
    connect: null,
    transaction_date: iso(transaction.createdAt),
    plan_object: {},
    subaccount: {},
  };
}

/** `data` of POST /customer (CustomerCreateResponse). */
export function customerJson(customer: SandboxCustomer) {
  return {
    transactions: [],
    subscriptions: [],
    authorizations: [],
    email: customer.email,
    first_name: customer.firstName ?? '',
    last_name: customer.lastName ?? '',
    phone: customer.phone ?? '',
    integration: integrationId,
    domain: 'test',
    metadata: {},
    customer_code: customer.customerCode,
    risk_action: 'default',
    id: customer.id,
    createdAt: customer.createdAt.toISOString(),
    updatedAt: customer.updatedAt.toISOString(),
    identified: false,
    identifications: null,
  };
}

/** `data` of POST /dedicated_account (DedicatedNubanCreateResponse). */
export function dedicatedAccountJson(account: SandboxDedicatedAccount, customer: SandboxCustomer) {
  const at = account.createdAt.toISOString();
  return {
    bank: { ...dedicatedBank },
    account_name: account.accountName,
    account_number: account.accountNumber,
    assigned: true,
    currency: 'NGN',
    metadata: null,
    active: true,
    id: account.id,
    created_at: at,
    updated_at: at,
    assignment: {
      integration: integrationId,
      assignee_id: customer.id,
      assignee_type: 'Customer',
      expired: false,
      account_type: 'PAY-WITH-TRANSFER-RECURRING',
      assigned_at: at,
      expired_at: null,
    },
    customer: {
      id: customer.id,
      first_name: customer.firstName ?? '',
      last_name: customer.lastName ?? '',
      email: customer.email,
      customer_code: customer.customerCode,
      phone: customer.phone ?? '',
      metadata: {},
      risk_action: 'default',
      international_format_phone: internationalPhone(customer.phone),
    },
  };
}

function recipientFields(recipient: SandboxRecipient) {
  return {
    active: true,
    createdAt: recipient.createdAt.toISOString(),
    currency: 'NGN',
    description: '',
    domain: 'test',
    email: '',
    id: recipient.id,
    integration: integrationId,
    metadata: null,
    name: recipient.name,
    recipient_code: recipient.recipientCode,
    type: 'nuban',
    updatedAt: recipient.createdAt.toISOString(),
    is_deleted: false,
  };
}

function recipientDetails(recipient: SandboxRecipient) {
  return {
    authorization_code: null,
    account_number: recipient.accountNumber,
    account_name: recipient.accountName,
    bank_code: recipient.bankCode,
    bank_name: recipient.bankName,
  };
}

/** `data` of POST /transferrecipient (TransferRecipientCreateResponse). */
export function recipientJson(recipient: SandboxRecipient) {
  return { ...recipientFields(recipient), isDeleted: false, details: recipientDetails(recipient) };
}

/** `data` of POST /transfer (TransferCreateResponse): the recipient is its id. */
export function transferCreatedJson(transfer: SandboxTransfer, recipient: SandboxRecipient) {
  return {
    transfersessionid: [],
    transfertrials: [],
    domain: 'test',
    amount: wire(transfer.amountKobo),
    currency: 'NGN',
    reference: transfer.reference,
    source: 'balance',
    source_details: null,
    reason: transfer.reason,
    status: transfer.status,
    failures: null,
    transfer_code: transfer.transferCode,
    titan_code: null,
    transferred_at: iso(transfer.transferredAt),
    id: transfer.id,
    integration: integrationId,
    request: transfer.id,
    recipient: recipient.id,
    createdAt: transfer.createdAt.toISOString(),
    updatedAt: transfer.updatedAt.toISOString(),
  };
}

/** `data` of GET /transfer/verify (TransferVerifyResponse): the recipient in full. */
export function transferJson(transfer: SandboxTransfer, recipient: SandboxRecipient) {
  return {
    amount: wire(transfer.amountKobo),
    createdAt: transfer.createdAt.toISOString(),
    currency: 'NGN',
    domain: 'test',
    failures: null,
    id: transfer.id,
    integration: integrationId,
    reason: transfer.reason,
    reference: transfer.reference,
    source: 'balance',
    source_details: null,
    status: transfer.status,
    titan_code: null,
    transfer_code: transfer.transferCode,
    transferred_at: iso(transfer.transferredAt),
    updatedAt: transfer.updatedAt.toISOString(),
    recipient: { ...recipientFields(recipient), details: recipientDetails(recipient) },
    session: { provider: null, id: null },
    gateway_response: transfer.gatewayResponse,
  };
}

/**
 * `data` of transfer.success / transfer.failed / transfer.reversed: the transfer object as the
 * webhook carries it (providers.md 1.5): integration as an object, snake_case timestamps.
 */
export function transferEventJson(transfer: SandboxTransfer, recipient: SandboxRecipient) {
  const { createdAt, updatedAt, integration: _id, ...rest } = transferJson(transfer, recipient);
  return {
    ...rest,
    integration: { id: integrationId, is_live: false, business_name: 'billrail sandbox' },
    created_at: createdAt,
    updated_at: updatedAt,
  };
}

/** The list's authorization of a transaction nobody paid: every field the schema requires, empty. */
const noAuthorization = {
  authorization_code: null,
  bin: null,
  last4: null,
  exp_month: null,
  exp_year: null,
  channel: null,
  card_type: null,
  bank: null,
  country_code: null,
  brand: null,
  reusable: false,
  signature: null,
  account_name: null,
} as const;

/**
 * One item of GET /transaction (TransactionListResponseArray): the transaction object of verify, where
 * the list's schema differs from VerifyResponse:
 * - `metadata` is an object or null (verify answers "" for none, the list may not);
 * - `paidAt` is a string: "" until the transaction is paid (`paid_at` stays null, as the schema allows);
 * - `authorization` names every field: an unpaid checkout's are null (not reusable), and `signature`
 *   is null for money into a dedicated account;
 * - `plan` is an object.
 */
export function transactionListItemJson(transaction: SandboxTransaction, customer: SandboxCustomer) {
  const item = transactionJson(transaction, customer);
  return {
    ...item,
    metadata: transaction.metadata,
    paidAt: item.paidAt ?? '',
    plan: {},
    authorization:
      transaction.status === 'abandoned' ? noAuthorization : { signature: null, ...item.authorization },
  };
}

/** Fetch's authorization of a transaction nobody paid: every field the schema requires, as text. */
const noFetchAuthorization = {
  authorization_code: '',
  bin: '',
  last4: '',
  exp_month: '',
  exp_year: '',
  channel: '',
  card_type: '',
  bank: '',
  country_code: '',
  brand: '',
  reusable: false,
  signature: '',
  account_name: null,
  receiver_bank_account_number: null,
  receiver_bank: null,
} as const;

/**
 * `data` of GET /transaction/:id (TransactionFetchResponse): the transaction object of verify, where
 * Fetch's schema is stricter (every field it names is required, and types a few that verify leaves
 * null as text):
 * - `paid_at` and `paidAt` are "" until the transaction is paid; `fees` is 0 until then;
 * - `metadata` is always an object with `custom_fields` (an empty list unless initialize sent one);
 * - `authorization` names every field: "" for an unpaid checkout's, `signature` "" for money into a
 *   dedicated account;
 * - the customer's missing names and phone are "", its metadata {};
 * - `plan` is an object, `helpdesk_link` null, and `source` the one the sandbox gives every
 *   transaction (it does not model where a payment started).
 */
export function transactionFetchJson(transaction: SandboxTransaction, customer: SandboxCustomer) {
  const { transaction_date: _date, plan_object: _plan, ...item } = transactionJson(transaction, customer);
  const metadata = transaction.metadata ?? {};
  return {
    ...item,
    helpdesk_link: null,
    paid_at: item.paid_at ?? '',
    paidAt: item.paidAt ?? '',
    fees: item.fees ?? 0,
    metadata: { ...metadata, custom_fields: metadata.custom_fields ?? [] },
    authorization:
      transaction.status === 'abandoned' ? noFetchAuthorization : { signature: '', ...item.authorization },
    customer: {
      ...item.customer,
      first_name: item.customer.first_name ?? '',
      last_name: item.customer.last_name ?? '',
      phone: item.customer.phone ?? '',
      international_format_phone: item.customer.international_format_phone ?? '',
      metadata: {},
    },
    plan: {},
    source: { type: 'api', source: 'merchant_api', identifier: null },
  };
}
