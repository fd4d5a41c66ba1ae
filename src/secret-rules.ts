// What a production secret must not be (API.md section 17.1, decision 0026): a value printed
// anywhere in the project, too short, or made of too few characters. A leaked pepper cannot be
// rotated cheaply (every PIN, the NIN uniqueness and stored answers hang on it), so start-up refuses.

/** The settings whose values are secrets, checked in production whenever they are set. */
export const productionSecretNames = [
  'PAYMENT_SIGNING_SECRET',
  'SECRET_PEPPER',
  'SECRET_PEPPER_PREVIOUS',
  'VAPID_PRIVATE_KEY',
  'DATA_PROVIDER_TOKEN',
  'BILLS_API_KEY',
  'BILLS_SECRET_KEY',
  'SOCIAL_API_KEY',
  'AIRTIME_CASH_API_KEY',
  'KYC_SECRET_KEY',
  'SMS_API_KEY',
  'S3_SECRET_ACCESS_KEY',
  'SANDBOX_CLOCK_TOKEN',
  'METRICS_TOKEN',
  'ADMIN_TOTP_KEY',
  'USSD_CALLBACK_TOKEN',
] as const;

/** The secrets this service makes itself, which `npm run secrets` prints; the others a provider issues. */
const generatedSecretNames: ReadonlySet<string> = new Set([
  'SECRET_PEPPER',
  'SECRET_PEPPER_PREVIOUS',
  'VAPID_PRIVATE_KEY',
  'METRICS_TOKEN',
  'SANDBOX_CLOCK_TOKEN',
  'ADMIN_TOTP_KEY',
  'USSD_CALLBACK_TOKEN',
]);

/** Where a good value of the secret comes from, said after a refusal. */
export function secretSource(name: string): string {
  return generatedSecretNames.has(name)
    ? 'npm run secrets prints a fresh one'
    : "use the key the provider's dashboard issues";
}

/**
 * Every value the project's own files give a secret: the env example's placeholders, compose's
 * sandbox demo values (its pepper and its VAPID private key are published), the README's, and the
 * sandbox simulators' keys in src/. Kept here, under src/, because the image ships src/ alone: a
 * start-up that read README.md would find nothing there and let everything through.
 * test/secret-rules.test.ts scans those files and fails when a value they give is missing here.
 */
export const knownExampleSecrets: ReadonlySet<string> = new Set([
  // src/config.ts and src/sandbox/: the sandbox's own credentials.
  'sk_test_sandbox',
  'sandbox-pepper-not-for-production',
  'sandbox-airtime-cash-key',
  'sandbox-bills-api-key',
  'PK_sandbox_bills_public',
  'SK_sandbox_bills_secret',
  '5d1a7c0e9b3f4a6d8e2c1b0a9f8e7d6c5b4a3f2e',
  'sandbox-social-key',
  'sandbox-sms-key',
  'sandbox-kyc-app',
  'sandbox-kyc-secret',
  // deploy/billrail.env.example's placeholders.
  'REPLACE_ME',
  'REPLACE_ME_sk_live_from_the_payment_provider',
  'REPLACE_ME_openssl_rand_hex_32_same_on_every_process',
  'REPLACE_ME_vapid_private_key',
  'REPLACE_ME_npm_run_secrets_prints_a_metrics_token',
  'REPLACE_ME_npm_run_secrets_prints_an_admin_totp_key',
  // compose.yaml's sandbox demo.
  'compose-sandbox-clock-token',
  'compose-sandbox-pepper-not-for-production',
  'compose-sandbox-ussd-callback-token',
  '53X4tG0IhM2wnnCsKs182MTG1nlyEvjmlj7yEDLgleA',
  // README's "Sandbox as its own process".
  '...',
]);

export const secretMinLength = 32;
export const secretMinDistinct = 16;
/**
 * Hex has 16 symbols: demanding all 16 would refuse most real keys (a random 32-digit hex key shows
 * all 16 about one time in 14, a 64-digit one three times in four), so hex needs 10, which a random
 * 32-digit key misses about once in 10,000 and `aaaa…` or `0123…0123` cannot reach.
 */
export const hexSecretMinDistinct = 10;

/** Why a value cannot be a production secret, or undefined when it can. */
export function secretProblem(value: string): string | undefined {
  if (knownExampleSecrets.has(value)) return "it is an example value printed in the project's own files";
  if (value.length < secretMinLength) return `it is shorter than ${secretMinLength} characters`;
  const distinct = new Set(value).size;
  const hex = /^[0-9a-fA-F]+$/.test(value);
  const least = hex ? hexSecretMinDistinct : secretMinDistinct;
  if (distinct < least)
    return `it has ${distinct} distinct characters, fewer than ${least}${hex ? ' for hex' : ''}: not a random value`;
  return undefined;
}
