import { BENCH_LIMITS, type Check } from '../common.ts';
import { call, must } from './client.ts';
import { koboOf, type Model, type Person } from './model.ts';
import type { Soak } from './soak-context.ts';

// The CBN tier limits under the soak (API.md 17.2, decisions 0044 and 0045; issue 41 item 7). The
// soak's people are Tier 2, each funded ₦200,000 at the start and buying, sending and receiving for
// minutes (the full soak's 600 s moved about ₦250,000 out of each of 20 people): under the CBN
// figures (₦200,000 a day, ₦500,000 at most) their debits would be refused LIMIT_EXCEEDED part way,
// at moments the soak cannot foresee under its faults, and what it reckons would stop being what
// the wallets hold. So the service processes run with the bench's limits (BENCH_LIMITS, for the
// same reason: figures, not `none`, so every debit still reads, judges and counts the day's sum
// under the wallet's lock, and every credit is still judged against the maximum) and the same
// figures for Tier 2, the soak's people's tier. The defaults stay the CBN figures.
//
// The limits then refuse nothing the soak does, and that is checked, not assumed: a LIMIT_EXCEEDED
// anywhere fails the run, and at the end each person's day as the service keeps it
// (getAccountLimits: the tier, the limit in force, what left today) must be the soak's own
// reckoning of what left them: purchases, bulk lines and scheduled runs charged, less the failed
// ones refunded, and transfers sent. Held money (none is expected) is counted with the wallet by
// the wallets' check: it is still the person's money.

/** The soak's people's daily debit limit and maximum balance, naira: BENCH_LIMITS' Tier 1 figures. */
const SOAK_LIMIT_NAIRA = BENCH_LIMITS.LIMIT_TIER1_DAILY as string;

/** The limits every service process of the soak is started with. */
export const SOAK_LIMITS: Readonly<Record<string, string>> = {
  ...BENCH_LIMITS,
  LIMIT_TIER2_DAILY: SOAK_LIMIT_NAIRA,
  LIMIT_TIER2_BALANCE: SOAK_LIMIT_NAIRA,
};

/** What the report says of the limits the service ran with. */
export const soakLimitsText = `CBN limits configured for Tier 1 and Tier 2 (the soak's people): ₦${Number(SOAK_LIMIT_NAIRA).toLocaleString('en-NG')} a day and at most (SOAK_LIMITS, from BENCH_LIMITS); Tier 0 and 3 the CBN figures`;

/** The Lagos day (YYYY-MM-DD) of the service's clock, read at the sandbox. */
export async function serviceLagosDay(soak: Soak): Promise<string> {
  const response = await fetch(`${soak.client.sandboxUrl}/__sandbox/clock`, {
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { data: { now: string } };
  // Africa/Lagos is UTC+1 all year (no daylight saving).
  return new Date(Date.parse(body.data.now) + 60 * 60 * 1000).toISOString().slice(0, 10);
}

/**
 * What left `person` by the soak's reckoning: every purchase and bulk line accepted and every
 * scheduled run made, less those that failed (refunded, their room given back), and the transfers
 * the service accepted. The same ends as the wallets' reckoning (`actual` for those a fault decided).
 */
export function debitedKobo(model: Model, person: Person, actual: Map<string, string>): bigint {
  let debited = person.transferredOutKobo;
  for (const purchase of model.purchases) {
    if (purchase.userId !== person.session.userId) continue;
    if ((purchase.expected ?? actual.get(purchase.id)) !== 'failed') debited += purchase.chargedKobo;
  }
  for (const schedule of model.schedules) {
    if (schedule.userId !== person.session.userId || schedule.skipped === true) continue;
    if ((schedule.expected ?? actual.get(`to:${schedule.recipient}`)) !== 'failed')
      debited += schedule.chargedKobo;
  }
  return debited;
}

type LimitsView = {
  tier: number;
  dailyDebitLimit: number | null;
  dailyDebitUsed: number;
  maxBalance: number | null;
  heldBalance: number;
};

/**
 * No debit was refused LIMIT_EXCEEDED (the soak's amounts stay far within its limits, so a refusal
 * is the service's error, never an outcome to take), and every person's day is the soak's reckoning.
 * `firstDay` is the Lagos day when the driving began: a run that crossed a Lagos midnight (the
 * quiet moves the clock two hours) started a new day part way, and then only the refusals are judged.
 */
export async function limitsCheck(soak: Soak, actual: Map<string, string>, firstDay: string): Promise<Check> {
  const refusals = [...soak.model.counts]
    .filter(([key]) => key.includes('LIMIT_EXCEEDED'))
    .map(([key, n]) => `${key}: ${n}`);
  const lastDay = await serviceLagosDay(soak);
  const sameDay = firstDay === lastDay;
  const expectedLimit = Number(SOAK_LIMIT_NAIRA);
  const wrong: string[] = [];
  let usedKobo = 0n;
  for (const person of soak.model.people) {
    const view = await must<LimitsView>(
      call(soak.client, 'getAccountLimits', {}, { session: person.session, method: 'GET' }),
      'getAccountLimits',
    );
    const who = person.session.phone;
    if (view.tier !== 2) wrong.push(`${who}: Tier ${view.tier}, not 2`);
    if (view.dailyDebitLimit !== expectedLimit || view.maxBalance !== expectedLimit)
      wrong.push(
        `${who}: limits ₦${view.dailyDebitLimit} a day, ₦${view.maxBalance} at most, not the soak's`,
      );
    usedKobo += koboOf(view.dailyDebitUsed);
    const expected = debitedKobo(soak.model, person, actual);
    if (sameDay && koboOf(view.dailyDebitUsed) !== expected)
      wrong.push(`${who}: ₦${view.dailyDebitUsed} used today, the soak reckons ₦${Number(expected) / 100}`);
  }
  const day = sameDay
    ? `each person's day (getAccountLimits) is what the soak reckons left them: ₦${Number(usedKobo) / 100} in all`
    : `the run crossed a Lagos midnight (${firstDay} to ${lastDay}): the day's sums not compared`;
  return {
    name: 'the CBN limits (configured above the soak’s amounts) refused no debit, and counted each person’s day as the soak did',
    ok: refusals.length === 0 && wrong.length === 0,
    detail: `${refusals.length === 0 ? 'no LIMIT_EXCEEDED' : refusals.join(', ')}; ${day}${wrong.length > 0 ? `: ${wrong.slice(0, 8).join('; ')}` : ''}`,
  };
}
