import { deliver, REQUEST_TIMEOUT_SECONDS, type SignedBody, signedChargeSuccess } from '../common.ts';
import { call } from './client.ts';
import { count, koboOf, type Person } from './model.ts';
import { between, pick, type Soak, untilStopped } from './soak-context.ts';

// Top-ups two ways. Signed webhooks as the provider sends them, several at once, each of them
// delivered once or twice and the lot in a shuffled order (a provider retries and does not keep
// order). And the checkout, as a browser pays: open the checkout page the API gave, post its Pay
// form; the sandbox then sends charge.success itself (or, while webhooks are dropped, does not, and
// the person's return page asks verifyTopup, as the web client does). Each one is credited once.

const WEBHOOK_DEADLINE_MS = 60_000;

/**
 * A top-up intent, or null when none was had: an intent whose answer never came (its key held by a
 * process that died) is simply not paid, as a person would start again, so nothing is owed.
 */
async function intent(soak: Soak, person: Person, naira: number) {
  const outcome = await call(
    soak.client,
    'createTopupIntent',
    { amount: naira },
    { session: person.session },
  );
  const answered = outcome.kind === 'answer' && outcome.status === 200;
  count(
    soak.model,
    'createTopupIntent',
    answered ? 'created' : outcome.kind === 'answer' ? `HTTP ${outcome.status}` : 'no answer',
  );
  return answered ? (outcome.body.data as { reference: string; checkoutUrl: string }) : null;
}

/** Delivers until the service answers 200 (a 503 while the database is away is retried). */
async function deliverUntilTaken(soak: Soak, signed: SignedBody): Promise<void> {
  const deadline = performance.now() + WEBHOOK_DEADLINE_MS;
  for (;;) {
    const status = await deliver(soak.serviceUrl, signed).catch(() => 0);
    count(soak.model, 'webhook charge.success', `HTTP ${status}`);
    if (status === 200) return;
    if (performance.now() > deadline) throw new Error(`a webhook was refused until the deadline (${status})`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** One top-up by a signed webhook, waited for (the setup's funding). */
export async function webhookTopup(soak: Soak, person: Person, naira: number): Promise<void> {
  const created = await intent(soak, person, naira);
  if (created === null) throw new Error('createTopupIntent had no answer');
  const { reference } = created;
  soak.model.topups.set(reference, { userId: person.session.userId, kobo: koboOf(naira), via: 'webhook' });
  person.baseKobo += koboOf(naira);
  person.topups++;
  await deliverUntilTaken(soak, signedChargeSuccess(soak.sequence.next++, reference, naira * 100));
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

/** A few top-ups whose webhooks come duplicated and out of order. */
async function webhookBatch(soak: Soak): Promise<void> {
  const bodies: SignedBody[] = [];
  for (let i = 0; i < 3; i++) {
    const person = pick(soak.model.people);
    const naira = between(1, 50) * 100;
    const created = await intent(soak, person, naira);
    if (created === null) continue;
    const { reference } = created;
    soak.model.topups.set(reference, { userId: person.session.userId, kobo: koboOf(naira), via: 'webhook' });
    person.baseKobo += koboOf(naira);
    person.topups++;
    const signed = signedChargeSuccess(soak.sequence.next++, reference, naira * 100);
    bodies.push(signed);
    if (Math.random() < 0.5) {
      bodies.push(signed);
      count(soak.model, 'webhook charge.success', 'sent twice');
    }
  }
  for (const signed of shuffled(bodies)) await deliverUntilTaken(soak, signed);
}

/** Pays at the sandbox checkout as a browser does: the page, then its Pay form posted. */
async function checkoutTopup(soak: Soak): Promise<void> {
  const person = pick(soak.model.people);
  const naira = between(1, 50) * 100;
  const created = await intent(soak, person, naira);
  if (created === null) return;
  const { reference, checkoutUrl } = created;
  const page = new URL(checkoutUrl, soak.client.sandboxUrl);
  // The checkout is the sandbox's page, wherever PUBLIC_BASE_URL says it is.
  const atSandbox = new URL(`${page.pathname}${page.search}`, soak.client.sandboxUrl);
  const html = await (
    await fetch(atSandbox, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000) })
  ).text();
  const action = [...html.matchAll(/<form[^>]*action="([^"]+)"/g)]
    .map((m) => (m[1] as string).replaceAll('&amp;', '&'))
    .find((a) => a.endsWith('/pay'));
  if (action === undefined) throw new Error(`the checkout page of ${reference} has no Pay form`);
  const paid = await fetch(new URL(action, atSandbox), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  await paid.arrayBuffer();
  if (paid.status !== 303) throw new Error(`paying at the checkout answered ${paid.status}`);
  soak.model.topups.set(reference, { userId: person.session.userId, kobo: koboOf(naira), via: 'checkout' });
  person.baseKobo += koboOf(naira);
  person.topups++;
  count(soak.model, 'checkout pay', 'paid');
}

export function driveTopups(soak: Soak): Promise<void> {
  let turn = 0;
  return untilStopped(soak, async () => {
    if (turn++ % 3 === 2) await checkoutTopup(soak);
    else await webhookBatch(soak);
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
}

/** What a person's return page does after the checkout: verifyTopup until it says success. */
export async function verifyCheckouts(soak: Soak): Promise<void> {
  for (const [reference, topup] of soak.model.topups) {
    if (topup.via !== 'checkout') continue;
    const person = soak.model.people.find((p) => p.session.userId === topup.userId);
    const outcome = await call(soak.client, 'verifyTopup', { reference }, { session: person?.session });
    const status =
      outcome.kind === 'answer' ? (outcome.body.data as { status?: string } | undefined)?.status : 'none';
    count(soak.model, 'verifyTopup after checkout', String(status));
  }
}
