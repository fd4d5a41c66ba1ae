import { mapConcurrent, nextPhone } from '../common.ts';
import { call, must, signIn } from './client.ts';
import type { Person } from './model.ts';
import type { Soak } from './soak-context.ts';
import { webhookTopup } from './topups.ts';

// The people of the soak, set up as the app sets a person up: sign-in with the SMS code, a name,
// KYC Tier 1 (liveness) and Tier 2 (an NIN of their own, so that transfers are allowed), the PIN,
// and a first top-up by signed webhook.

const SETUP_CONCURRENCY = 4;
const FIRST_TOPUP_NAIRA = 200_000;

/** An 11-digit NIN the sandbox resolves to the person (not starting with 0, 8 or 9). */
const ninOf = (index: number, run: number) =>
  `1${String(run % 100_000).padStart(5, '0')}${String(index).padStart(5, '0')}`;

/** Letters only, as a profile name must be: A, B, … Z, BA, BB, … */
const surnameOf = (index: number) =>
  `${[...index.toString(26)].map((d) => String.fromCharCode(65 + Number.parseInt(d, 26))).join('')}soak`;

async function person(soak: Soak, index: number, run: number): Promise<Person> {
  const session = await signIn(soak.client, nextPhone());
  const as = { session };
  await must(
    call(soak.client, 'updateProfile', { firstName: 'Soak', lastName: surnameOf(index) }, as),
    'updateProfile',
  );
  await must(call(soak.client, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, as), 'submitKycTier1');
  const nin = ninOf(index, run);
  await must(call(soak.client, 'submitKycTier2', { nin, phone: session.phone }, as), 'submitKycTier2');
  await must(call(soak.client, 'setTransactionPin', { pin: soak.pin }, as), 'setTransactionPin');
  const someone: Person = {
    session,
    nin,
    baseKobo: 0n,
    lockedKobo: 0n,
    checkinKobo: 0n,
    transferredOutKobo: 0n,
    topups: 0,
  };
  await webhookTopup(soak, someone, FIRST_TOPUP_NAIRA);
  return someone;
}

export async function setUpPeople(soak: Soak, count: number): Promise<void> {
  const run = Math.floor(Date.now() / 1000);
  soak.model.people = await mapConcurrent(
    Array.from({ length: count }, (_, i) => i),
    SETUP_CONCURRENCY,
    (i) => person(soak, i, run),
  );
}
