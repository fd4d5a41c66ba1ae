import { z } from 'zod';
import { sandboxFundingAccounts } from '../config.ts';

// The environment of the standalone sandbox (npm run sandbox, src/sandbox/main.ts), parsed once.
// A bad or missing value is a one-line message naming the variable, and the process exits 1.

export class SandboxEnvError extends Error {
  override name = 'SandboxEnvError';
}

const url = z.url({ protocol: /^https?$/ });
/** A VAPID public key: URL-safe base64 of an uncompressed P-256 point (65 bytes, first 0x04). */
const vapidPublicKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]+={0,2}$/, 'URL-safe base64')
  .refine((value) => {
    const point = Buffer.from(value, 'base64url');
    return point.length === 65 && point[0] === 4;
  }, 'a 65-byte uncompressed P-256 public key');
/** bank code:account number:name, as the service's <PROVIDER>_FUNDING_ACCOUNT. */
const fundingAccount = z.string().regex(/^\d{3,6}:\d{10}:.+$/, 'bankCode:accountNumber:account name');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4010),
  HOST: z.string().min(1).default('127.0.0.1'),
  // The sandbox's own public base URL (its checkout page and push endpoints); default http://HOST:PORT.
  PUBLIC_BASE_URL: url.optional(),
  // Where the service is (webhooks, callbacks, the clock-jobs call): behind a proxy, the proxy.
  SERVICE_URL: url.default('http://127.0.0.1:3000'),
  PAYMENT_SIGNING_SECRET: z.string().min(1).default('sk_test_sandbox'),
  SANDBOX_CLOCK_TOKEN: z.string().min(16, 'at least 16 characters'),
  VAPID_PUBLIC_KEY: vapidPublicKey.optional(),
  // The VTU providers' bank accounts, as the service is configured with them: a transfer into one
  // funds that simulator.
  DATA_FUNDING_ACCOUNT: fundingAccount.default(sandboxFundingAccounts.data),
  BILLS_FUNDING_ACCOUNT: fundingAccount.default(sandboxFundingAccounts.bills),
  SOCIAL_FUNDING_ACCOUNT: fundingAccount.default(sandboxFundingAccounts.social),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // The service's USSD callback token and service code, as the service is configured with them: the
  // feature phone (/__sandbox/ussd) calls ${SERVICE_URL}/api/public/ussd/<USSD_CALLBACK_TOKEN>. Unset,
  // the phone says it does not know the callback (a service in the sandbox makes a random token
  // when it has none, which a standalone sandbox cannot know).
  USSD_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,200}$/, '16 to 200 letters, digits, _ or - (it is a path segment)')
    .optional(),
  USSD_SERVICE_CODE: z
    .string()
    .regex(/^\*[0-9*]{1,30}#$/, 'a USSD code such as *384*2255#')
    .default('*384*2255#'),
});

export type SandboxEnv = {
  port: number;
  host: string;
  publicBaseUrl: string | undefined;
  serviceUrl: string;
  paymentSigningSecret: string;
  clockJobsToken: string;
  vapidPublicKey: string | undefined;
  vtuFundingAccounts: Record<'data' | 'bills' | 'social', string>;
  logLevel: z.output<typeof envSchema>['LOG_LEVEL'];
  /** The secret segment of the service's USSD callback path; undefined: not given. */
  ussdCallbackToken: string | undefined;
  ussdServiceCode: string;
};

export function loadSandboxEnv(env: Record<string, string | undefined>): SandboxEnv {
  // Empty strings mean "unset", as for the service (src/config.ts).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join('.') ?? 'environment';
    const missing = issue?.code === 'invalid_type' && cleaned[name] === undefined;
    throw new SandboxEnvError(`invalid ${name}: ${missing ? 'required' : (issue?.message ?? 'bad value')}`);
  }
  const e = parsed.data;
  const accountNumber = (account: string) => account.split(':')[1]!;
  const trim = (value: string) => value.replace(/\/+$/, '');
  return {
    port: e.PORT,
    host: e.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL === undefined ? undefined : trim(e.PUBLIC_BASE_URL),
    serviceUrl: trim(e.SERVICE_URL),
    paymentSigningSecret: e.PAYMENT_SIGNING_SECRET,
    clockJobsToken: e.SANDBOX_CLOCK_TOKEN,
    vapidPublicKey: e.VAPID_PUBLIC_KEY,
    vtuFundingAccounts: {
      data: accountNumber(e.DATA_FUNDING_ACCOUNT),
      bills: accountNumber(e.BILLS_FUNDING_ACCOUNT),
      social: accountNumber(e.SOCIAL_FUNDING_ACCOUNT),
    },
    logLevel: e.LOG_LEVEL,
    ussdCallbackToken: e.USSD_CALLBACK_TOKEN,
    ussdServiceCode: e.USSD_SERVICE_CODE,
  };
}
