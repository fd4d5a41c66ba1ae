import { call } from './client.ts';
import { count, type Expected, koboOf, outcomeOfDigit, type Person } from './model.ts';
import { airtimeOrder } from './purchases.ts';
import { between, pick, type Soak, untilStopped } from './soak-context.ts';

// Orders that buy later or in bulk (API.md section 16). A scheduled purchase of airtime due a
// minute or two ahead on the service's clock, run once (no `every`): it runs while the soak drives
// or when the quiet moves the clock, and is charged what the bulk preview prices its line at. A
// bulk order of airtime lines with mixed outcome digits: charged the preview's total on acceptance,
// each failed line refunded.

const MAX_LINES = 5;
const DIGITS = ['1', '2', '3', '5', '7'] as const;

type PreviewLine = { phone: string; ok: boolean; amount?: number };

async function serviceNow(soak: Soak): Promise<number> {
  const response = await fetch(`${soak.client.sandboxUrl}/__sandbox/clock`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { data: { now: string } };
  return Date.parse(body.data.now);
}

async function preview(soak: Soak, person: Person, lines: object[]) {
  const outcome = await call(
    soak.client,
    'previewBulkOrder',
    { service: 'airtime', lines },
    { session: person.session },
  );
  if (outcome.kind !== 'answer' || outcome.status !== 200) return null;
  return outcome.body.data as { lines: PreviewLine[]; total: number };
}

async function schedule(soak: Soak, person: Person): Promise<void> {
  const line = airtimeOrder(pick(DIGITS));
  const priced = await preview(soak, person, [line]);
  const price = priced?.lines[0]?.amount;
  if (price === undefined) return;
  const startAt = new Date((await serviceNow(soak)) + between(60, 120) * 1000).toISOString();
  const key = crypto.randomUUID();
  const attempt = async () => {
    const outcome = await call(
      soak.client,
      'createSchedule',
      { service: 'airtime', order: line, startAt, pin: soak.pin },
      { session: person.session, key },
    );
    if (outcome.kind === 'unresolved') return false;
    count(
      soak.model,
      'createSchedule',
      outcome.status === 200 ? 'created' : `HTTP ${outcome.status} ${outcome.body.error?.code ?? ''}`,
    );
    if (outcome.status !== 200) return true;
    const { id } = outcome.body.data as { id: string };
    soak.model.schedules.push({
      userId: person.session.userId,
      id,
      recipient: line.phone,
      chargedKobo: koboOf(price),
      expected: soak.model.providerFaultOn.value ? null : outcomeOfDigit(line.phone),
    });
    return true;
  };
  if (!(await attempt())) soak.model.unresolved.push({ what: `createSchedule ${key}`, retry: attempt });
}

async function bulk(soak: Soak, person: Person): Promise<void> {
  const lines = Array.from({ length: between(2, MAX_LINES) }, () => airtimeOrder(pick(DIGITS)));
  const priced = await preview(soak, person, lines);
  if (priced === null) return;
  const key = crypto.randomUUID();
  const faulted = soak.model.providerFaultOn.value;
  const attempt = async () => {
    const outcome = await call(
      soak.client,
      'createBulkOrder',
      { service: 'airtime', lines, total: priced.total, pin: soak.pin },
      { session: person.session, key },
    );
    if (outcome.kind === 'unresolved') return false;
    count(
      soak.model,
      'createBulkOrder',
      outcome.status === 200 ? 'accepted' : `HTTP ${outcome.status} ${outcome.body.error?.code ?? ''}`,
    );
    if (outcome.status !== 200) return true;
    const order = outcome.body.data as { lines: { phone: string; transactionId?: string }[] };
    order.lines.forEach((accepted, i) => {
      const price = priced.lines[i]?.amount;
      if (accepted.transactionId === undefined || price === undefined) return;
      const expected: Expected | null =
        faulted || soak.model.providerFaultOn.value ? null : outcomeOfDigit(accepted.phone);
      soak.model.purchases.push({
        userId: person.session.userId,
        id: accepted.transactionId,
        reference: undefined,
        service: 'airtime',
        recipient: accepted.phone,
        chargedKobo: koboOf(price),
        expected,
        via: 'bulk',
        acceptedAt: performance.now(),
      });
    });
    return true;
  };
  if (!(await attempt())) soak.model.unresolved.push({ what: `createBulkOrder ${key}`, retry: attempt });
}

export function driveOrders(soak: Soak): Promise<void> {
  return untilStopped(soak, async () => {
    const person = pick(soak.model.people);
    if (Math.random() < 0.5) await schedule(soak, person);
    else await bulk(soak, person);
    await new Promise((resolve) => setTimeout(resolve, 500));
  });
}
