import type { Clock } from '../../clock.ts';
import { uniqueKey } from './requests.ts';
import type {
  SandboxCustomer,
  SandboxPaymentsState,
  SandboxRecipient,
  SandboxTransaction,
  SandboxWebhookDelivery,
} from './state.ts';
import type { Timers, WebhookSender } from './webhooks.ts';
import { newCode, nextId, transactionJson } from './wire.ts';

// The sandbox payment provider as its route groups see it: its records, its clock, its webhooks and
// timers, and the hooks the sandbox gives it. Each route group (transactions.ts, customers.ts,
// dedicated-accounts.ts, banks.ts, transfers.ts, checkout.ts, controls.ts) closes over one of these.

export type PaymentsSimulator = {
  payments: SandboxPaymentsState;
  clock: Clock;
  webhooks: WebhookSender;
  /** Every delayed step (transfer settlements, reversals, webhook retries) stops when the app closes. */
  timers: Timers;
  /** The service's public base URL, where the checkout page is served. */
  publicBaseUrl: string;
  /** Told of every transfer that settles, and of every settled transfer that is reversed. */
  onTransferSettled: ((accountNumber: string, amountKobo: bigint) => void) | undefined;
  onTransferReversed: ((accountNumber: string, amountKobo: bigint) => void) | undefined;
};

/** Tells the service a transaction was paid (charge.success), and returns the delivery. */
export function sendChargeSuccess(
  sim: PaymentsSimulator,
  transaction: SandboxTransaction,
): SandboxWebhookDelivery {
  const data = transactionJson(transaction, customerOf(sim.payments, transaction.customerCode));
  return sim.webhooks.send('charge.success', transaction.reference, data);
}

/** The customer with this email, made on first use; names and phone given update it. */
export function customerFor(
  sim: PaymentsSimulator,
  email: string,
  update: { firstName?: string | null; lastName?: string | null; phone?: string | null },
): SandboxCustomer {
  const { payments } = sim;
  const key = email.toLowerCase();
  const code = payments.customersByEmail.get(key);
  const at = sim.clock.now();
  let customer = code === undefined ? undefined : payments.customers.get(code);
  if (customer === undefined) {
    customer = {
      id: nextId(payments),
      customerCode: uniqueKey(payments.customers, () => newCode('CUS_')),
      email,
      firstName: null,
      lastName: null,
      phone: null,
      createdAt: at,
      updatedAt: at,
    };
    payments.customers.set(customer.customerCode, customer);
    payments.customersByEmail.set(key, customer.customerCode);
  }
  for (const field of ['firstName', 'lastName', 'phone'] as const) {
    const value = update[field];
    if (value !== undefined && value !== null) {
      customer[field] = value;
      customer.updatedAt = at;
    }
  }
  return customer;
}

export function customerOf(payments: SandboxPaymentsState, code: string): SandboxCustomer {
  const customer = payments.customers.get(code);
  if (customer === undefined) throw new Error(`sandbox state broken: no customer ${code}`);
  return customer;
}

export function recipientOf(payments: SandboxPaymentsState, code: string): SandboxRecipient {
  const recipient = payments.recipients.get(code);
  if (recipient === undefined) throw new Error(`sandbox state broken: no recipient ${code}`);
  return recipient;
}

const firstNames = [
  'ADAEZE',
  'BOLA',
  'CHINEDU',
  'DAMILOLA',
  'EMEKA',
  'FUNMI',
  'GARBA',
  'HAUWA',
  'IFEANYI',
  'JUMOKE',
];
const lastNames = [
  'ADEYEMI',
  'BELLO',
  'CHUKWU',
  'DANJUMA',
  'EZE',
  'FASHOLA',
  'GANA',
  'IBRAHIM',
  'OKAFOR',
  'YUSUF',
];

/** A dedicated account's own name, else a stable made-up name from the digits ("SURNAME FIRSTNAME"). */
export function accountName(payments: SandboxPaymentsState, accountNumber: string): string {
  const dedicated = payments.dedicatedAccounts.get(accountNumber);
  if (dedicated !== undefined) return dedicated.accountName;
  const digit = (i: number) => Number(accountNumber[i]);
  return `${lastNames[digit(8)]} ${firstNames[digit(9)]}`;
}
