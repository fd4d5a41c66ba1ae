import type { FastifyInstance } from 'fastify';
import { createSandboxFaultsState, type SandboxFaultsState } from './faults.ts';
import { createSandboxPaymentsState, type SandboxPaymentsState } from './payments/state.ts';
import { createSandboxPushState, type SandboxPushState } from './push/push-service.ts';
import { createSandboxRateLimitsState, type SandboxRateLimitsState } from './rate-limits.ts';
import { createSandboxAirtimeCashState, type SandboxAirtimeCashState } from './vtu/airtime-cash.ts';
import { createSandboxBillsState, type SandboxBillsState } from './vtu/bills.ts';
import { createSandboxDataState, type SandboxDataState } from './vtu/data-state.ts';
import { createSandboxSocialState, type SandboxSocialState } from './vtu/social.ts';

// In-memory state of the sandbox's simulated outside parties. It lives as long as the process,
// like a provider's own test environment would between test runs.

export const SANDBOX_SMS_API_KEY = 'sandbox-sms-key';
/** The credentials the sandbox KYC provider expects in its `AppId` and `Authorization` headers. */
export const SANDBOX_KYC_APP_ID = 'sandbox-kyc-app';
export const SANDBOX_KYC_SECRET = 'sandbox-kyc-secret';

export type SandboxSms = { phone: string; message: string; code: string | null; sentAt: string };

export type SandboxEmail = {
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  sentAt: string;
};
/** Emails the sandbox mailbox keeps; the oldest go first. */
export const sandboxEmailsMax = 1_000;

export type SandboxState = {
  /** The last SMS sent to each phone (E.164). */
  lastSms: Map<string, SandboxSms>;
  /** Liveness tokens the sandbox liveness page issued and nobody has verified yet, with their outcome. */
  livenessTokens: Map<string, 'pass' | 'fail'>;
  /** Every email the service sent (the JSON transport's rendering), oldest first, at most sandboxEmailsMax. */
  emails: SandboxEmail[];
  /** The payment provider's records (Paystack's wire shapes, src/sandbox/payment-provider.ts). */
  payments: SandboxPaymentsState;
  /** The VTU providers' simulators: the data vendor, the bills aggregator (VTpass), the SMM panel. */
  data: SandboxDataState;
  bills: SandboxBillsState;
  social: SandboxSocialState;
  /** The airtime-to-cash provider (VTU Africa's Airtime2Cash wire shape). */
  airtimeCash: SandboxAirtimeCashState;
  /** The Web Push service and the browsers behind its subscriptions (src/sandbox/push/). */
  push: SandboxPushState;
  /** The faults set on the providers' APIs (src/sandbox/faults.ts). */
  faults: SandboxFaultsState;
  /** The VTU providers' rate limits and the purchases they took (src/sandbox/rate-limits.ts). */
  rateLimits: SandboxRateLimitsState;
};

/**
 * What the app sees of the sandbox: its state, a way to mount its routes, and the token it shows the
 * service's clock-jobs route (src/http/sandbox-clock-route.ts), which the app registers with it.
 */
export type Sandbox = {
  state: SandboxState;
  clockJobsToken: string;
  registerRoutes(app: FastifyInstance): void;
};

export function createSandboxState(): SandboxState {
  return {
    lastSms: new Map(),
    livenessTokens: new Map(),
    emails: [],
    payments: createSandboxPaymentsState(),
    data: createSandboxDataState(),
    bills: createSandboxBillsState(),
    social: createSandboxSocialState(),
    airtimeCash: createSandboxAirtimeCashState(),
    push: createSandboxPushState(),
    faults: createSandboxFaultsState(),
    rateLimits: createSandboxRateLimitsState(),
  };
}
