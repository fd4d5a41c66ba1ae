import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { accountNumberPattern, asBody, invalid, routeOptions, text, uniqueKey } from './requests.ts';
import { type PaymentsSimulator, sendChargeSuccess } from './simulator.ts';
import type { SandboxTransaction } from './state.ts';
import { dedicatedBank, lowerAlphanumeric, newCode, nextId } from './wire.ts';

// The sandbox's own controls of the payment provider (API.md section 8), answering in the service's
// envelope: a bank transfer into a dedicated account (POST /__sandbox/bank-transfer {accountNumber,
// amount (naira)}: a successful transaction on channel dedicated_nuban and a charge.success), the
// webhook mode (POST /__sandbox/webhooks {mode: deliver|drop}, GET for the mode and the last
// deliveries) and the transfer balance (POST /__sandbox/payments/balance {amount (naira)}).

export function registerControlRoutes(
  sandbox: FastifyInstance,
  sim: PaymentsSimulator,
  apiPrefix: string,
): void {
  sandbox.post('/__sandbox/bank-transfer', routeOptions, async (request, reply) =>
    bankTransfer(sim, request, reply),
  );
  sandbox.post('/__sandbox/webhooks', routeOptions, async (request, reply) => {
    const body = asBody(request.body);
    if ((body.mode !== 'deliver' && body.mode !== 'drop') || Object.keys(body).length !== 1) {
      return invalid(reply, 'mode must be "deliver" or "drop"');
    }
    sim.payments.webhookMode = body.mode;
    return { success: true, data: { mode: sim.payments.webhookMode } };
  });
  sandbox.get('/__sandbox/webhooks', routeOptions, async () => ({
    success: true,
    data: {
      mode: sim.payments.webhookMode,
      deliveries: sim.payments.webhookDeliveries
        .slice(-50)
        .map(({ settled: _settled, ...delivery }) => delivery)
        .reverse(),
    },
  }));
  sandbox.post(`${apiPrefix}/balance`, routeOptions, async (request, reply) =>
    setBalance(sim, request, reply),
  );
}

/** Money paid into a dedicated account from outside: a paid transaction and its charge.success. */
function bankTransfer(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { payments } = sim;
  const body = asBody(request.body);
  const accountNumber = text(body.accountNumber);
  const amount = body.amount;
  if (
    accountNumber === undefined ||
    !accountNumberPattern.test(accountNumber) ||
    typeof amount !== 'number' ||
    !isNairaAmount(amount) ||
    amount <= 0
  ) {
    return invalid(
      reply,
      'accountNumber (10 digits) and amount (naira, above 0, two decimals at most) are required',
    );
  }
  const account = payments.dedicatedAccounts.get(accountNumber);
  if (account === undefined) {
    return reply.code(404).send({
      success: false,
      error: { code: 'NOT_FOUND', message: 'no dedicated account with that number' },
    });
  }
  const at = sim.clock.now();
  const transaction: SandboxTransaction = {
    id: nextId(payments),
    reference: uniqueKey(payments.transactions, () => lowerAlphanumeric(16)),
    accessCode: lowerAlphanumeric(15),
    amountKobo: nairaToKobo(amount),
    customerCode: account.customerCode,
    status: 'success',
    channel: 'dedicated_nuban',
    callbackUrl: null,
    metadata: { receiver_account_number: account.accountNumber, receiver_bank: dedicatedBank.name },
    dedicatedAccountNumber: account.accountNumber,
    authorizationCode: newCode('AUTH_'),
    createdAt: at,
    paidAt: at,
  };
  payments.transactions.set(transaction.reference, transaction);
  const delivery = sendChargeSuccess(sim, transaction);
  return {
    success: true,
    data: { reference: transaction.reference, accountNumber, amount, webhook: delivery.status },
  };
}

/** Sets the transfer balance (money paid in never adds to it: Paystack settles collections to a bank). */
function setBalance(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  const amount = body.amount;
  if (typeof amount !== 'number' || !isNairaAmount(amount) || Object.keys(body).length !== 1) {
    return invalid(reply, 'amount: naira, 0 or more, two decimals at most');
  }
  const kobo = nairaToKobo(amount);
  if (kobo > BigInt(Number.MAX_SAFE_INTEGER)) return invalid(reply, 'amount is too large');
  sim.payments.balanceKobo = kobo;
  return { success: true, data: { balance: koboToNaira(sim.payments.balanceKobo) } };
}
