import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { sql } from 'kysely';
import type { FundingDeps } from '../../src/funding/service.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { checkout, sandboxPayments } from '../payments/helpers.ts';

// Shared by the funding tests: top-up intents through the API, signed webhooks sent by the test as
// the provider would send them, and reads of what the service stored and credited. Nothing here
// sleeps: processing of a stored event is awaited by running its job's handler directly, which waits
// for (and then leaves alone) a run already under way in the route.

export const webhookPath = '/api/public/payments/webhook/payment';

/** Funding's deps as createModules gives them, for the tests that call funding's functions directly. */
export const fundingDeps = (world: World): FundingDeps => ({
  db: world.ctx.db,
  clock: world.ctx.clock,
  jobs: world.ctx.jobs,
  payments: world.ctx.payments,
  raiseAlert: world.ctx.modules.alerts.api.raiseAlert,
  findUserById: world.ctx.modules.auth.api.findUserById,
  requireKycTier: world.ctx.modules.kyc.api.requireKycTier,
  approvedNinName: world.ctx.modules.kyc.api.approvedNinName,
  limits: world.ctx.modules.limits.api,
  ledgerShards: world.ctx.config.database.ledgerShards,
});
export const BOUNDED = { timeout: 60_000 };

export type Intent = { reference: string; checkoutUrl: string; amount: number; status: 'pending' };

export async function createIntent(world: World, user: SignedIn, amount: number): Promise<Intent> {
  return ok(await post<Intent>(world, 'createTopupIntent', { amount }, { token: user.accessToken }));
}

export async function verify(world: World, user: SignedIn, reference: string) {
  return post<{ reference: string; status: string; credited: boolean }>(
    world,
    'verifyTopup',
    { reference },
    { token: user.accessToken },
  );
}

export const sign = (body: Buffer | string, secret: string): string =>
  createHmac('sha512', secret).update(body).digest('hex');

export const secretOf = (world: World): string => world.ctx.config.secrets.paymentSigning;

/** A charge.success body in Paystack's shape (the fields the service reads, and a few it does not). */
export function chargeSuccess(
  reference: string,
  amountKobo: number,
  extra: { currency?: string; status?: string; id?: number } = {},
): string {
  return JSON.stringify({
    event: 'charge.success',
    data: {
      id: extra.id ?? 1,
      domain: 'test',
      status: extra.status ?? 'success',
      reference,
      amount: amountKobo,
      currency: extra.currency ?? 'NGN',
      channel: 'card',
      customer: { email: 'someone@example.com' },
    },
  });
}

export type WebhookAnswer = { status: number; text: string; contentType: string };

/** POSTs a body to the webhook endpoint, signed with the world's secret unless told otherwise. */
export async function sendWebhook(
  world: World,
  body: Buffer | string,
  options: { signature?: string | null; contentType?: string } = {},
): Promise<WebhookAnswer> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json' };
  const signature = options.signature === undefined ? sign(body, secretOf(world)) : options.signature;
  if (signature !== null) headers['x-payment-signature'] = signature;
  const response = await fetch(`${world.baseUrl}${webhookPath}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });
  return {
    status: response.status,
    text: await response.text(),
    contentType: response.headers.get('content-type') ?? '',
  };
}

export const sha256 = (body: Buffer | string): string => createHash('sha256').update(body).digest('hex');

export async function storedEvent(world: World, body: Buffer | string) {
  return world.ctx.db
    .selectFrom('payment_events')
    .selectAll()
    .where('body_sha256', '=', sha256(body))
    .executeTakeFirst();
}

/** Runs the sweep job now (it waits for a drain in progress) and returns the body's processed row. */
export async function processed(world: World, body: Buffer | string) {
  const event = await storedEvent(world, body);
  assert.ok(event !== undefined, 'the event was stored');
  await world.ctx.jobs.runNow(paymentWebhookSweepJob);
  const row = await storedEvent(world, body);
  assert.ok(row?.processed_at !== null && row?.processed_at !== undefined, 'the event was processed');
  return row;
}

export async function walletKobo(world: World, userId: string): Promise<bigint> {
  return (await userBalances(world.ctx.db, userId)).wallet;
}

/** How many ledger postings credit this top-up reference (0 or 1, never more). */
export async function creditPostings(world: World, reference: string): Promise<number> {
  const rows = await world.ctx.db
    .selectFrom('ledger_transactions')
    .select('id')
    .where('reference', '=', `topup:${reference}`)
    .execute();
  return rows.length;
}

export async function intentRow(world: World, reference: string) {
  return world.ctx.db
    .selectFrom('topup_intents')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirst();
}

export async function eventCount(world: World): Promise<number> {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from payment_events`.execute(
    world.ctx.db,
  );
  return Number(rows[0]?.n);
}

/** The funding.topup_credited domain events enqueued for a reference. */
export async function creditedEvents(world: World, reference: string) {
  const { rows } = await sql<{
    data: { type: string; userId: string; reference: string; amountKobo: string };
  }>`
    select data from pgboss.job
    where name = 'domain-event' and data->>'type' = 'funding.topup_credited' and data->>'reference' = ${reference}
  `.execute(world.ctx.db);
  return rows.map((r) => r.data);
}

export async function assertLedgerOk(world: World): Promise<void> {
  const check = await checkLedger(world.ctx.db);
  assert.ok(check.ok, `ledger check: ${JSON.stringify(check.imbalances)}`);
}

export async function setWebhookMode(world: World, mode: 'deliver' | 'drop'): Promise<void> {
  const response = await fetch(`${world.baseUrl}/__sandbox/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ mode }),
  });
  assert.equal(response.status, 200);
}

/** The charge.success body the sandbox provider sends (or would have sent) for a paid reference. */
export async function providerChargeSuccess(world: World, reference: string): Promise<string> {
  const response = await fetch(
    `${world.baseUrl}/__sandbox/payments/transaction/verify/${encodeURIComponent(reference)}`,
    { headers: { authorization: `Bearer ${secretOf(world)}` } },
  );
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as { data: unknown };
  return JSON.stringify({ event: 'charge.success', data });
}

/** Pays an intent at the sandbox checkout with webhooks dropped, so nothing reaches the service. */
export async function payWithoutWebhook(world: World, intent: Intent): Promise<void> {
  await setWebhookMode(world, 'drop');
  try {
    await checkout(intent.checkoutUrl, 'pay');
  } finally {
    await setWebhookMode(world, 'deliver');
  }
  assert.equal(sandboxPayments(world).transactions.get(intent.reference)?.status, 'success');
}
