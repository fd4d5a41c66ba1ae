import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asBody, refuse, routeOptions, text, uniqueKey } from './requests.ts';
import type { PaymentsSimulator } from './simulator.ts';
import type { SandboxCustomer, SandboxDedicatedAccount, SandboxPaymentsState } from './state.ts';
import { dedicatedAccountJson, dedicatedBank, nextId } from './wire.ts';

// Paystack's Create Dedicated Virtual Account. The customer needs first_name, last_name and phone; the
// only bank is test-bank ("Test Bank", Paystack's test-mode provider); one account per customer, so
// asking again returns the same account. Account numbers are 10 digits, unique, starting with 7; the
// name is "BILLRAIL/<LAST> <FIRST>" in capitals. Money comes in through POST /__sandbox/bank-transfer
// (controls.ts).

export function registerDedicatedAccountRoutes(api: FastifyInstance, sim: PaymentsSimulator): void {
  api.post('/dedicated_account', routeOptions, async (request, reply) =>
    createDedicatedAccount(sim, request, reply),
  );
}

function createDedicatedAccount(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  const code = text(body.customer);
  const customer = code === undefined ? undefined : sim.payments.customers.get(code);
  if (customer === undefined) return refuse(reply, 400, 'Customer not found');
  const bank = body.preferred_bank ?? dedicatedBank.slug;
  if (bank !== dedicatedBank.slug) {
    return refuse(
      reply,
      400,
      `Dedicated NUBAN not available for ${String(bank)}: test mode has test-bank only`,
    );
  }
  if (customer.firstName === null || customer.lastName === null || customer.phone === null) {
    return refuse(
      reply,
      400,
      "The customer's first_name, last_name and phone are required to create a dedicated account",
    );
  }
  return {
    status: true,
    message: 'Assigned Managed Account Successfully Created',
    data: dedicatedAccountJson(accountOf(sim, customer), customer),
  };
}

/** The customer's one dedicated account, opened on first use. */
function accountOf(sim: PaymentsSimulator, customer: SandboxCustomer): SandboxDedicatedAccount {
  const { payments } = sim;
  const existing = [...payments.dedicatedAccounts.values()].find(
    (a) => a.customerCode === customer.customerCode,
  );
  if (existing !== undefined) return existing;
  const accountNumber = newAccountNumber(payments);
  const account: SandboxDedicatedAccount = {
    id: nextId(payments),
    accountNumber,
    accountName: `BILLRAIL/${customer.lastName} ${customer.firstName}`.toUpperCase(),
    customerCode: customer.customerCode,
    createdAt: sim.clock.now(),
  };
  payments.dedicatedAccounts.set(accountNumber, account);
  return account;
}

function newAccountNumber(payments: SandboxPaymentsState): string {
  return uniqueKey(payments.dedicatedAccounts, () => `7${randomInt(0, 1e9).toString().padStart(9, '0')}`);
}
