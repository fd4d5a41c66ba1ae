import { call } from './client.ts';
import { count, koboOf, outcomeOfDigit, type Person } from './model.ts';
import { airtimeOrder } from './purchases.ts';
import type { Soak } from './soak-context.ts';
import { webhookTopup } from './topups.ts';

// The peak profile's load: airtime purchases (buyAirtime) from many funded buyers, in a closed loop
// of C callers, each sending its next purchase as soon as the last one has its answer. Each purchase
// carries its own Idempotency-Key, kept across the client's retries (client.ts), so that "nothing
// doubled" can be checked. The recipient's last digit picks the sandbox's outcome (API.md section 8):
// mostly an instant success, some failures (1), some pending then success (2) or failure (3), so that
// refunds and requeries run under the load too. A buyer whose money runs low is topped up by signed
// webhook, as the soak's people are funded (people.ts), so that no purchase is refused for want of it.

const DIGITS: readonly (readonly [string, number])[] = [
  ['5', 23.5],
  ['7', 23.5],
  ['8', 23.5],
  ['9', 23.5],
  ['1', 4],
  ['2', 1],
  ['3', 1],
];
const WEIGHT = DIGITS.reduce((sum, [, weight]) => sum + weight, 0);

function digit(): string {
  let roll = Math.random() * WEIGHT;
  for (const [d, weight] of DIGITS) {
    roll -= weight;
    if (roll < 0) return d;
  }
  return '5';
}

/** Below this much left (by the soak's reckoning, refunds not counted), a buyer is topped up. */
const LOW_KOBO = koboOf(100_000);
const TOPUP_NAIRA = 300_000;

/** One purchase as the peak's callers see it: when sent, how long to its definite answer, which. */
export type PeakPurchase = { at: number; ms: number; outcome: 'accepted' | 'refused' | 'unresolved' };

export type PeakLoad = {
  soak: Soak;
  /** Each buyer's charges so far, kobo (what their funding must stay ahead of). */
  charged: Map<string, bigint>;
  toppingUp: Set<string>;
  purchases: PeakPurchase[];
  next: { value: number };
};

export function peakLoad(soak: Soak): PeakLoad {
  return { soak, charged: new Map(), toppingUp: new Set(), purchases: [], next: { value: 0 } };
}

async function fundIfLow(load: PeakLoad, person: Person): Promise<void> {
  const id = person.session.userId;
  const left = person.baseKobo - (load.charged.get(id) ?? 0n);
  if (left >= LOW_KOBO || load.toppingUp.has(id)) return;
  load.toppingUp.add(id);
  try {
    await webhookTopup(load.soak, person, TOPUP_NAIRA);
  } finally {
    load.toppingUp.delete(id);
  }
}

/** One buyAirtime; the model learns what it charged, or the refusal is counted. */
async function purchase(load: PeakLoad, person: Person): Promise<void> {
  const { soak } = load;
  const order = airtimeOrder(digit());
  const key = crypto.randomUUID();
  const sentAt = performance.now();
  const settle = async (): Promise<boolean> => {
    const outcome = await call(
      soak.client,
      'buyAirtime',
      { ...order, pin: soak.pin },
      { session: person.session, key },
    );
    if (outcome.kind === 'unresolved') return false;
    if (outcome.status !== 200) {
      count(soak.model, 'buyAirtime', `HTTP ${outcome.status} ${outcome.body.error?.code ?? ''}`);
      return true;
    }
    const accepted = outcome.body.data as { id: string; reference: string; amount: number };
    const chargedKobo = koboOf(accepted.amount);
    const id = person.session.userId;
    load.charged.set(id, (load.charged.get(id) ?? 0n) + chargedKobo);
    soak.model.purchases.push({
      userId: id,
      id: accepted.id,
      reference: accepted.reference,
      service: 'airtime',
      recipient: order.phone,
      chargedKobo,
      expected: outcomeOfDigit(order.phone),
      via: 'direct',
      acceptedAt: performance.now(),
    });
    count(soak.model, 'buyAirtime', `accepted, digit ${order.phone.at(-1)}`);
    return true;
  };
  const before = soak.model.purchases.length;
  const settled = await settle();
  const outcome = !settled ? 'unresolved' : soak.model.purchases.length > before ? 'accepted' : 'refused';
  load.purchases.push({ at: sentAt, ms: performance.now() - sentAt, outcome });
  if (!settled) soak.model.unresolved.push({ what: `buyAirtime ${key}`, retry: settle });
}

/**
 * `concurrency` callers, each buying again as soon as its last purchase is answered, until
 * `stopped`; buyers taken in turn, so that each wallet sees its share.
 */
export async function closedLoop(
  load: PeakLoad,
  concurrency: number,
  stopped: { value: boolean },
): Promise<void> {
  const people = load.soak.model.people;
  const caller = async () => {
    while (!stopped.value) {
      const person = people[load.next.value++ % people.length] as Person;
      try {
        await fundIfLow(load, person);
        await purchase(load, person);
      } catch (error) {
        load.soak.errors.push((error as Error).message.slice(0, 300));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}

export type CalibrationStep = {
  concurrency: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  notAccepted: number;
};

export function percentileOf(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(sorted.length * p) - 1))] as number;
}

/** The purchases sent within [from, to), and what they show. */
export function stepFigures(load: PeakLoad, from: number, to: number) {
  const sent = load.purchases.filter((p) => p.at >= from && p.at < to);
  const accepted = sent.filter((p) => p.outcome === 'accepted');
  const ms = accepted.map((p) => p.ms);
  return {
    accepted: accepted.length,
    notAccepted: sent.length - accepted.length,
    p50Ms: Math.round(percentileOf(ms, 0.5)),
    p99Ms: Math.round(percentileOf(ms, 0.99)),
  };
}

/** p99 of a purchase (its retries included) that calibration takes as still bounded. */
export const P99_BOUND_MS = 2_000;

/**
 * A short calibration: the closed loop at 4, 8, 16, … callers for `stepSeconds` each, until the
 * rate stops growing (calibrated()), p99 passes P99_BOUND_MS or a purchase is not accepted. The
 * concurrency chosen is the smallest within 10% of the best rate seen with p99 bounded and every
 * purchase accepted: more callers past it only queue.
 */
export async function calibrate(
  load: PeakLoad,
  stepSeconds: number,
  maxConcurrency = 256,
): Promise<{ steps: CalibrationStep[]; chosen: number }> {
  const steps: CalibrationStep[] = [];
  for (let concurrency = 4; concurrency <= maxConcurrency; concurrency *= 2) {
    const stopped = { value: false };
    const from = performance.now();
    const loop = closedLoop(load, concurrency, stopped);
    await new Promise((resolve) => setTimeout(resolve, stepSeconds * 1000));
    stopped.value = true;
    await loop;
    const to = performance.now();
    const figures = stepFigures(load, from, to);
    const step = {
      concurrency,
      perSecond: figures.accepted / ((to - from) / 1000),
      p50Ms: figures.p50Ms,
      p99Ms: figures.p99Ms,
      notAccepted: figures.notAccepted,
    };
    steps.push(step);
    if (calibrated(steps)) break;
  }
  return { steps, chosen: chooseConcurrency(steps) };
}

const bounded = (step: CalibrationStep) => step.p99Ms <= P99_BOUND_MS && step.notAccepted === 0;

/**
 * Whether the last step ends the calibration: p99 past its bound or a purchase not accepted, or two
 * steps in a row that did not beat the best rate before them by 10% (one step alone may be the other
 * work of a busy machine).
 */
export function calibrated(steps: CalibrationStep[]): boolean {
  const last = steps.at(-1);
  if (last === undefined) return false;
  if (!bounded(last)) return true;
  if (steps.length < 3) return false;
  const best = Math.max(...steps.slice(0, -2).map((s) => s.perSecond));
  return steps.slice(-2).every((s) => s.perSecond < best * 1.1);
}

/** The smallest concurrency within 10% of the best bounded rate (4 when none was bounded). */
export function chooseConcurrency(steps: CalibrationStep[]): number {
  const good = steps.filter(bounded);
  const best = Math.max(0, ...good.map((s) => s.perSecond));
  return good.find((s) => s.perSecond >= best * 0.9)?.concurrency ?? 4;
}
