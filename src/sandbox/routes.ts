import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { SandboxClock } from '../clock.ts';
import { registerSandboxClock } from './clock-routes.ts';
import { registerSandboxFaults } from './faults.ts';
import { registerSandboxKyc } from './kyc-provider.ts';
import { registerSandboxLivenessPage } from './liveness-page.ts';
import { registerSandboxMailbox } from './mailbox.ts';
import { registerSandboxMessages } from './messages.ts';
import { registerSandboxPayments } from './payment-provider.ts';
import { registerSandboxPush } from './push/push-service.ts';
import { registerSandboxRateLimits } from './rate-limits.ts';
import type { Sandbox, SandboxState } from './state.ts';
import { registerSandboxUssd } from './ussd-gateway.ts';
import { registerSandboxAirtimeCash } from './vtu/airtime-cash.ts';
import { registerSandboxBills } from './vtu/bills.ts';
import { registerSandboxData } from './vtu/data.ts';
import { registerSandboxSocial } from './vtu/social.ts';

// The sandbox's simulated outside parties, mounted under /__sandbox/. Each speaks its party's real
// wire format, and the service reaches it over HTTP through the same adapter it uses in production.
// The other way round, the sandbox reaches the service only over HTTP too (webhooks, callbacks, the
// clock's jobs), at the URLs it is given, like the outside party it stands for: it sees none of the
// service's modules, its database or its ledger.

/** What the sandbox needs from its surroundings: the composition root gives it, never the context. */
export type SandboxDeps = {
  /** The sandbox clock: every simulator reads it, POST /__sandbox/clock moves it. */
  clock: SandboxClock;
  /** The payment provider's secret key (PAYMENT_SIGNING_SECRET): its API key and its webhook HMAC key. */
  paymentSigningSecret: string;
  /**
   * The sandbox's own public base URL, where its checkout page and push endpoints are: the service's
   * when the sandbox is served in process, the standalone sandbox's own otherwise; either is known
   * before the sandbox is built (choosePort, holdPort).
   */
  publicBaseUrl: string;
  /** The service's payment webhook endpoint (state.payments.webhookUrlOverride takes precedence). */
  paymentWebhookUrl: string;
  /** The service's route that runs its clock-driven jobs (src/http/sandbox-clock-route.ts). */
  clockJobsUrl: string;
  /** Each VTU provider's bank account (config.vtu.<name>.funding): a transfer into it funds its simulator. */
  vtuFundingAccounts: Record<'data' | 'bills' | 'social', string>;
  /**
   * The service's VAPID public key (getPushPublicKey): the key push subscriptions are made with when
   * the browser names none; undefined (a standalone sandbox without VAPID_PUBLIC_KEY): it must name one.
   */
  pushApplicationServerKey: string | undefined;
  /** The token it shows the service's clock-jobs route; default: a random one, for an in-process sandbox. */
  clockJobsToken?: string;
  /**
   * The service's USSD callback, its secret token included (API.md 17.6); undefined: a standalone
   * sandbox not given USSD_CALLBACK_TOKEN, whose feature phone then says so.
   */
  ussdCallbackUrl: string | undefined;
  /** The code people dial (USSD_SERVICE_CODE), sent in the gateway's serviceCode field. */
  ussdServiceCode: string;
};

/** The sandbox over its state: its routes, and the token it shows the service's clock-jobs route. */
export function createSandbox(state: SandboxState, deps: SandboxDeps): Sandbox {
  // Random for each in-process sandbox, and known only to it and the service it was built with; a
  // standalone one is given the secret it shares with the services (SANDBOX_CLOCK_TOKEN).
  const clockJobsToken = deps.clockJobsToken ?? randomBytes(32).toString('base64url');
  return {
    state,
    clockJobsToken,
    registerRoutes: (app) => registerSandbox(app, state, deps, clockJobsToken),
  };
}

function registerSandbox(
  app: FastifyInstance,
  state: SandboxState,
  deps: SandboxDeps,
  clockJobsToken: string,
): void {
  const { clock } = deps;
  // First, so that a fault set on a provider meets its API's requests before anything else does.
  registerSandboxFaults(app, state.faults);
  // A VTU provider's "refuse above R purchases a second", met once the purchase's body is parsed.
  registerSandboxRateLimits(app, state.rateLimits, clock);
  // The KYC provider (Dojah's wire shape) under /__sandbox/kyc, and its browser widget.
  registerSandboxKyc(app, state);
  registerSandboxLivenessPage(app);
  // The payment provider (Paystack's wire shape) under /__sandbox/payments, its checkout page, the
  // bank-transfer and webhook-mode controls. A transfer into a VTU provider's bank account tops up
  // that simulator's balance; its reversal takes the money back out, as the provider's float would.
  registerSandboxPayments(app, state.payments, {
    clock,
    signingSecret: deps.paymentSigningSecret,
    webhookUrl: deps.paymentWebhookUrl,
    publicBaseUrl: deps.publicBaseUrl,
    onTransferSettled: (accountNumber, amountKobo) => moveFloat(state, deps, accountNumber, amountKobo),
    onTransferReversed: (accountNumber, amountKobo) => moveFloat(state, deps, accountNumber, -amountKobo),
  });
  // The VTU providers under /__sandbox/vtu/<data|bills|social>, each with its settable balance at
  // /__sandbox/providers/<name>/balance (API.md section 8), and the airtime-to-cash provider (VTU
  // Africa's Airtime2Cash) under /__sandbox/vtu/airtime-cash/portal/api.
  registerSandboxData(app, state.data, { clock });
  registerSandboxBills(app, state.bills, { clock });
  registerSandboxSocial(app, state.social, { clock });
  registerSandboxAirtimeCash(app, state.airtimeCash, { clock });
  // The SMS gateway, the phones and the operations inbox; the browsers' push service; the clock.
  registerSandboxMessages(app, state, clock);
  registerSandboxMailbox(app, state, clock);
  registerSandboxPush(app, state.push, {
    clock,
    serviceBaseUrl: deps.publicBaseUrl,
    applicationServerKey: deps.pushApplicationServerKey,
  });
  registerSandboxClock(app, { clock, clockJobsUrl: deps.clockJobsUrl, clockJobsToken });
  // The USSD gateway (Africa's Talking's callbacks) under /__sandbox/ussd, and its feature phone page.
  registerSandboxUssd(app, { callbackUrl: deps.ussdCallbackUrl, serviceCode: deps.ussdServiceCode });
}

/** Money arriving in (or, negative, leaving) the bank account of the VTU simulator it belongs to, if any. */
function moveFloat(state: SandboxState, deps: SandboxDeps, accountNumber: string, kobo: bigint): void {
  const accounts = deps.vtuFundingAccounts;
  const float = new Map<string, { balanceKobo: bigint }>([
    [accounts.data, state.data],
    [accounts.bills, state.bills],
    [accounts.social, state.social],
  ]).get(accountNumber);
  if (float !== undefined) float.balanceKobo += kobo;
}
