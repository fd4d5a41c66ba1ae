import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  accountNumberPattern,
  asBody,
  nonBlank,
  refuse,
  routeOptions,
  text,
  uniqueKey,
  unresolvableAccountNumber,
  wireAmount,
} from './requests.ts';
import { accountName, type PaymentsSimulator, recipientOf } from './simulator.ts';
import type { SandboxRecipient, SandboxTransfer } from './state.ts';
import {
  banks,
  lowerAlphanumeric,
  newCode,
  nextId,
  recipientJson,
  transferCreatedJson,
  transferEventJson,
  transferJson,
} from './wire.ts';

// Paystack's transfers: Create Transfer Recipient (nuban only; the same account number and bank code
// give back the same recipient, as Paystack documents), Initiate Transfer, Verify Transfer and Check
// Balance. A transfer needs a reference of 16-50 lower-case letters, digits, "-" and "_", and enough
// balance; the amount leaves the balance at once and the transfer answers "pending". It settles after
// state.transferSettleDelayMs, by the last digit of the recipient's account number: 1 fails it (the
// money returns), 2 succeeds and then reverses it after state.transferReversalDelayMs, anything else
// succeeds. The same reference again with the same recipient and amount answers the existing transfer;
// with a different recipient or amount it is refused.

const transferReferencePattern = /^[a-z0-9_-]{16,50}$/;

export function registerTransferRoutes(api: FastifyInstance, sim: PaymentsSimulator): void {
  api.post('/transferrecipient', routeOptions, async (request, reply) =>
    createRecipient(sim, request, reply),
  );
  api.post('/transfer', routeOptions, async (request, reply) => initiateTransfer(sim, request, reply));
  api.get('/transfer/verify/:reference', routeOptions, async (request, reply) =>
    verifyTransfer(sim, request, reply),
  );
  api.get('/balance', routeOptions, async () => ({
    status: true,
    message: 'Balances retrieved',
    data: [{ currency: 'NGN', balance: Number(sim.payments.balanceKobo) }],
  }));
}

function createRecipient(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  if (body.type !== 'nuban')
    return refuse(reply, 400, 'Recipient type not supported: the sandbox has nuban only');
  const name = nonBlank(body.name);
  if (name === null) return refuse(reply, 400, 'Name is required');
  const accountNumber = text(body.account_number);
  if (accountNumber === undefined || !accountNumberPattern.test(accountNumber)) {
    return refuse(reply, 400, 'Account number must be 10 digits');
  }
  const bankCode = text(body.bank_code);
  const bank = bankCode === undefined ? undefined : banks.get(bankCode);
  if (bankCode === undefined || bank === undefined)
    return refuse(reply, 400, `Unknown bank code: ${bankCode ?? ''}`);
  if (body.currency !== undefined && body.currency !== 'NGN')
    return refuse(reply, 400, 'Currency not supported');
  if (accountNumber === unresolvableAccountNumber) return refuse(reply, 400, 'Cannot resolve account');
  return reply.code(201).send({
    status: true,
    message: 'Transfer recipient created successfully',
    data: recipientJson(recipientFor(sim, { name, accountNumber, bankCode, bankName: bank.name })),
  });
}

/** The recipient of this account number at this bank, made on first use. */
function recipientFor(
  sim: PaymentsSimulator,
  account: { name: string; accountNumber: string; bankCode: string; bankName: string },
): SandboxRecipient {
  const { payments } = sim;
  const existing = [...payments.recipients.values()].find(
    (r) => r.accountNumber === account.accountNumber && r.bankCode === account.bankCode,
  );
  if (existing !== undefined) return existing;
  const recipient: SandboxRecipient = {
    id: nextId(payments),
    recipientCode: uniqueKey(payments.recipients, () => newCode('RCP_')),
    name: account.name,
    accountNumber: account.accountNumber,
    accountName: accountName(payments, account.accountNumber),
    bankCode: account.bankCode,
    bankName: account.bankName,
    createdAt: sim.clock.now(),
  };
  payments.recipients.set(recipient.recipientCode, recipient);
  return recipient;
}

function initiateTransfer(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { payments } = sim;
  const body = asBody(request.body);
  if (body.source !== 'balance') return refuse(reply, 400, 'Invalid source: only balance is supported');
  const amount = wireAmount(body.amount);
  if (amount === null) return refuse(reply, 400, 'Invalid amount');
  const recipientCode = text(body.recipient);
  const recipient = recipientCode === undefined ? undefined : payments.recipients.get(recipientCode);
  if (recipient === undefined) return refuse(reply, 400, 'Recipient specified is invalid');
  if (body.currency !== undefined && body.currency !== 'NGN')
    return refuse(reply, 400, 'Currency not supported');
  const given = text(body.reference);
  if (given !== undefined && !transferReferencePattern.test(given)) {
    return refuse(reply, 400, 'Invalid reference: 16 to 50 lower-case letters, digits, - and _');
  }
  const existing = given === undefined ? undefined : payments.transfers.get(given);
  if (existing !== undefined) {
    if (existing.recipientCode !== recipient.recipientCode || existing.amountKobo !== amount) {
      return refuse(reply, 400, 'Duplicate Transfer Reference');
    }
    return {
      status: true,
      message: 'Transfer has been queued',
      data: transferCreatedJson(existing, recipient),
    };
  }
  if (payments.balanceKobo < amount)
    return refuse(reply, 400, 'Your balance is not enough to fulfil this request');
  const transfer = startTransfer(sim, {
    reference: given ?? uniqueKey(payments.transfers, () => lowerAlphanumeric(20)),
    amountKobo: amount,
    recipientCode: recipient.recipientCode,
    reason: text(body.reason) ?? '',
  });
  return {
    status: true,
    message: 'Transfer has been queued',
    data: transferCreatedJson(transfer, recipient),
  };
}

/** Records a pending transfer, takes its amount from the balance and settles it later. */
function startTransfer(
  sim: PaymentsSimulator,
  order: { reference: string; amountKobo: bigint; recipientCode: string; reason: string },
): SandboxTransfer {
  const { payments } = sim;
  const at = sim.clock.now();
  const transfer: SandboxTransfer = {
    id: nextId(payments),
    ...order,
    transferCode: newCode('TRF_'),
    status: 'pending',
    gatewayResponse: null,
    createdAt: at,
    updatedAt: at,
    transferredAt: null,
  };
  payments.balanceKobo -= order.amountKobo;
  payments.transfers.set(transfer.reference, transfer);
  sim.timers.after(payments.transferSettleDelayMs, () => settleTransfer(sim, transfer));
  return transfer;
}

function verifyTransfer(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { reference } = request.params as { reference: string };
  const transfer = sim.payments.transfers.get(reference);
  if (transfer === undefined) return refuse(reply, 404, 'Transfer not found');
  return {
    status: true,
    message: 'Transfer retrieved',
    data: transferJson(transfer, recipientOf(sim.payments, transfer.recipientCode)),
  };
}

function settleTransfer(sim: PaymentsSimulator, transfer: SandboxTransfer): void {
  if (transfer.status !== 'pending') return;
  const recipient = recipientOf(sim.payments, transfer.recipientCode);
  const at = sim.clock.now();
  transfer.updatedAt = at;
  if (recipient.accountNumber.endsWith('1')) {
    transfer.status = 'failed';
    transfer.gatewayResponse =
      'The recipient account could not be credited (sandbox: account number ends in 1)';
    sim.payments.balanceKobo += transfer.amountKobo;
    sim.webhooks.send('transfer.failed', transfer.reference, transferEventJson(transfer, recipient));
    return;
  }
  transfer.status = 'success';
  transfer.transferredAt = at;
  sim.onTransferSettled?.(recipient.accountNumber, transfer.amountKobo);
  sim.webhooks.send('transfer.success', transfer.reference, transferEventJson(transfer, recipient));
  if (recipient.accountNumber.endsWith('2')) {
    sim.timers.after(sim.payments.transferReversalDelayMs, () => reverseTransfer(sim, transfer, recipient));
  }
}

function reverseTransfer(
  sim: PaymentsSimulator,
  transfer: SandboxTransfer,
  recipient: SandboxRecipient,
): void {
  if (transfer.status !== 'success') return;
  transfer.status = 'reversed';
  transfer.updatedAt = sim.clock.now();
  transfer.gatewayResponse = 'Reversed by the receiving bank (sandbox: account number ends in 2)';
  sim.payments.balanceKobo += transfer.amountKobo;
  sim.onTransferReversed?.(recipient.accountNumber, transfer.amountKobo);
  sim.webhooks.send('transfer.reversed', transfer.reference, transferEventJson(transfer, recipient));
}
