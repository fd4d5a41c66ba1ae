import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Check } from '../common.ts';
import { call, listAll, must } from './client.ts';
import { expectedBalanceKobo, koboOf, type Person } from './model.ts';
import type { Soak } from './soak-context.ts';

// The soak's final checks, from outside the service: through the API as each person sees their
// money, and with SQL on the ledger as an auditor reads it (the soak is an outside checker, not a
// domain: its SQL may name any table).

const WALLET_DEADLINE_MS = 60_000;

type Purchase = {
  id: string;
  status: string;
  service: string;
  recipient: string;
  token?: string;
  pins?: string[];
};
type Movement = { kind: string; reference: string; purchaseId?: string };

export async function ledgerCheckCli(repoRoot: string, databaseUrl: string): Promise<Check> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['src/ledger/check-cli.ts'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl, NODE_ENV: 'development', LOG_LEVEL: 'warn' },
    });
    const result = JSON.parse(stdout) as { ok: boolean; accounts: number; entries: number };
    return {
      name: 'the ledger balances (src/ledger/check-cli.ts)',
      ok: result.ok,
      detail: `${result.accounts} accounts, ${result.entries} entries`,
    };
  } catch (error) {
    return {
      name: 'the ledger balances (src/ledger/check-cli.ts)',
      ok: false,
      detail: (error as Error).message.slice(0, 500),
    };
  }
}

/** Final statuses of every purchase, as their owners see them. */
export async function finalPurchases(soak: Soak): Promise<Map<string, Purchase>> {
  const all = new Map<string, Purchase>();
  for (const person of soak.model.people) {
    for (const p of await listAll<Purchase>(soak.client, 'listMyVtuTransactions', person.session))
      all.set(p.id, p);
  }
  return all;
}

type WalletView = { balance: number; heldBalance: number; lockedSavings: number; checkinAccrued: number };

/**
 * How each purchase ended, by id, and by `to:<recipient>` for a schedule's run (whose id the soak
 * never hears): for the purchases a fault left to the provider to decide.
 */
export function actualEnds(purchases: Map<string, Purchase>): Map<string, string> {
  const actual = new Map<string, string>();
  for (const [id, p] of purchases) {
    actual.set(id, p.status);
    actual.set(`to:${p.recipient}`, p.status);
  }
  return actual;
}

function walletDiff(soak: Soak, person: Person, actual: Map<string, string>, wallet: WalletView) {
  const expected = expectedBalanceKobo(soak.model, person, actual);
  const diffs: string[] = [];
  // Money held over the tier's maximum (API.md 17.2, decision 0045) is still the person's: the
  // reckoning is of the balance and the held balance together (the soak's limits hold none).
  const heldKobo = koboOf(wallet.heldBalance);
  if (koboOf(wallet.balance) + heldKobo !== expected)
    diffs.push(
      `balance ₦${wallet.balance}${heldKobo === 0n ? '' : ` + held ₦${wallet.heldBalance}`}, expected ₦${Number(expected) / 100}`,
    );
  if (koboOf(wallet.lockedSavings) !== person.lockedKobo)
    diffs.push(`locked ₦${wallet.lockedSavings}, expected ₦${Number(person.lockedKobo) / 100}`);
  if (koboOf(wallet.checkinAccrued) !== person.checkinKobo)
    diffs.push(`check-in ₦${wallet.checkinAccrued}, expected ₦${Number(person.checkinKobo) / 100}`);
  return diffs;
}

/**
 * Every wallet equals the model's, its held balance counted with it (polled for a while: a credit
 * may still be in the service's inbox).
 */
export async function walletsCheck(soak: Soak, purchases: Map<string, Purchase>): Promise<Check> {
  const actual = actualEnds(purchases);
  const deadline = performance.now() + WALLET_DEADLINE_MS;
  let diffs: string[] = [];
  let heldKobo = 0n;
  do {
    diffs = [];
    heldKobo = 0n;
    for (const person of soak.model.people) {
      const wallet = await must<WalletView>(
        call(soak.client, 'getWallet', {}, { session: person.session, method: 'GET' }),
        'getWallet',
      );
      heldKobo += koboOf(wallet.heldBalance);
      for (const diff of walletDiff(soak, person, actual, wallet))
        diffs.push(`${person.session.phone}: ${diff}`);
    }
    if (diffs.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  } while (performance.now() < deadline);
  return {
    name: 'every wallet equals the soak’s own reckoning (balance with any held balance, locked savings, check-in accrual)',
    ok: diffs.length === 0,
    detail:
      diffs.length === 0
        ? `${soak.model.people.length} wallets, ₦${Number(heldKobo) / 100} held`
        : diffs.slice(0, 10).join('; '),
  };
}

export function outcomesCheck(soak: Soak, purchases: Map<string, Purchase>): Check[] {
  const wrong: string[] = [];
  const missing: string[] = [];
  let decidedByDigit = 0;
  let decidedByProvider = 0;
  for (const expected of soak.model.purchases) {
    const actual = purchases.get(expected.id);
    if (actual === undefined) {
      missing.push(expected.id);
      continue;
    }
    if (expected.expected === null) decidedByProvider++;
    else decidedByDigit++;
    if (expected.expected !== null && actual.status !== expected.expected)
      wrong.push(
        `${expected.service} ${expected.id} to …${expected.recipient.slice(-4)} ${actual.status}, digit says ${expected.expected}`,
      );
  }
  const noToken = [...purchases.values()].filter(
    (p) =>
      p.status === 'success' &&
      ((p.service === 'electricity' && !p.token) || (p.service === 'education' && !(p.pins?.length ?? 0))),
  );
  return [
    {
      name: 'every purchase the API accepted is in its owner’s history',
      ok: missing.length === 0,
      detail: `${soak.model.purchases.length} accepted, ${missing.length} missing`,
    },
    {
      name: 'every purchase ended as its recipient’s last digit says',
      ok: wrong.length === 0,
      detail: `${decidedByDigit} by the digit (${decidedByProvider} decided by the provider under a fault)${wrong.length > 0 ? `: ${wrong.slice(0, 8).join('; ')}` : ''}`,
    },
    {
      name: 'every electricity token and exam pin came (late ones by requery)',
      ok: noToken.length === 0,
      detail: `${noToken.length} successes without them`,
    },
  ];
}

/** Through the API: each person's refunds, one per failed purchase, none for a success. */
export async function refundsCheck(soak: Soak, purchases: Map<string, Purchase>): Promise<Check> {
  const problems: string[] = [];
  let refunds = 0;
  for (const person of soak.model.people) {
    const movements = await listAll<Movement>(soak.client, 'listTransactions', person.session, {
      kind: 'refund',
    });
    const perPurchase = new Map<string, number>();
    for (const m of movements)
      if (m.purchaseId !== undefined) perPurchase.set(m.purchaseId, (perPurchase.get(m.purchaseId) ?? 0) + 1);
    refunds += movements.length;
    for (const p of purchases.values()) {
      const owner = soak.model.purchases.find((e) => e.id === p.id)?.userId;
      if (owner !== undefined && owner !== person.session.userId) continue;
      const n = perPurchase.get(p.id) ?? 0;
      if (owner === undefined && n === 0) continue;
      if (p.status === 'failed' && n !== 1) problems.push(`failed ${p.id} refunded ${n} times`);
      if (p.status === 'success' && n !== 0) problems.push(`success ${p.id} refunded ${n} times`);
    }
  }
  const failed = [...purchases.values()].filter((p) => p.status === 'failed').length;
  return {
    name: 'every failed purchase was refunded exactly once, no success was (listTransactions kind=refund)',
    ok: problems.length === 0,
    detail: `${failed} failed, ${refunds} refunds${problems.length > 0 ? `: ${problems.slice(0, 8).join('; ')}` : ''}`,
  };
}

/** With SQL on the ledger: the refund posting of each failed purchase exists, carrying its amount. */
export async function refundsSqlCheck(databaseUrl: string): Promise<Check> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      status: string;
      refunds: string;
      wrong: string;
      processing: string;
    }>(`
      select v.status,
             count(*) filter (where r.id is not null) as refunds,
             count(*) filter (where (v.status = 'failed') <> (r.id is not null)) as wrong,
             count(*) filter (where v.status = 'processing') as processing
        from vtu_transactions v
        left join ledger_transactions r on r.reference = 'vtu:' || v.reference || ':refund'
       where v.direction = 'debit'
       group by v.status`);
    const wrong = rows.reduce((n, r) => n + Number(r.wrong), 0);
    const processing = rows.reduce((n, r) => n + Number(r.processing), 0);
    const detail = rows.map((r) => `${r.status}: refunds ${r.refunds}`).join(', ');
    return {
      name: 'SQL: a refund posting for each failed purchase and none for any other; none processing',
      ok: wrong === 0 && processing === 0,
      detail: `${detail}; ${wrong} out of rule, ${processing} processing`,
    };
  } finally {
    await client.end();
  }
}

export async function topupsCheck(soak: Soak): Promise<Check> {
  const problems: string[] = [];
  for (const person of soak.model.people) {
    const credits = await listAll<Movement>(soak.client, 'listTransactions', person.session, {
      kind: 'topup',
    });
    const byReference = new Map<string, number>();
    for (const c of credits) byReference.set(c.reference, (byReference.get(c.reference) ?? 0) + 1);
    if (credits.length !== person.topups)
      problems.push(`${person.session.phone}: ${credits.length} top-up credits, ${person.topups} paid`);
  }
  return {
    name: 'every top-up paid was credited once (duplicated, reordered and dropped webhooks included)',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${soak.model.topups.size} top-ups` : problems.slice(0, 8).join('; '),
  };
}

type ScheduleRead = { id: string; runs: number; skipsInRow: number; status: string };

/** Each modelled schedule as the service lists it now (listSchedules of its owner). */
async function schedulesAsListed(soak: Soak): Promise<Map<string, ScheduleRead>> {
  const listed = new Map<string, ScheduleRead>();
  const owners = new Set(soak.model.schedules.map((s) => s.userId));
  for (const person of soak.model.people.filter((p) => owners.has(p.session.userId))) {
    for (const s of await listAll<ScheduleRead>(soak.client, 'listSchedules', person.session))
      listed.set(s.id, s);
  }
  return listed;
}

/**
 * Marks the one-off schedules whose run the service skipped because the wallet could not cover it
 * then: the person's other purchases ran first, which the soak cannot order, so the skip is the
 * service's to decide and the soak's to take (a skip that charged is still caught by the wallets).
 * Called after the quiet, before the wallets are reckoned.
 */
export async function readScheduleOutcomes(soak: Soak): Promise<void> {
  const listed = await schedulesAsListed(soak);
  for (const schedule of soak.model.schedules) {
    const found = listed.get(schedule.id);
    schedule.skipped = found?.status === 'ended' && found.runs === 0 && found.skipsInRow === 1;
  }
}

export async function schedulesAndPollCheck(soak: Soak, pollId: string): Promise<Check[]> {
  const wrong: string[] = [];
  const listed = await schedulesAsListed(soak);
  for (const expected of soak.model.schedules) {
    const found = listed.get(expected.id);
    const ranOnce = found?.runs === 1 && found.status === 'ended';
    if (!ranOnce && expected.skipped !== true)
      wrong.push(`${expected.id}: ${found?.runs} runs, ${found?.skipsInRow} skipped, ${found?.status}`);
  }
  const skipped = soak.model.schedules.filter((s) => s.skipped === true).length;
  const broadcasts = await listAll<{ poll?: { id: string; options: { id: string; votes: number }[] } }>(
    soak.client,
    'listBroadcasts',
    soak.admin,
  );
  const poll = broadcasts.find((b) => b.poll?.id === pollId)?.poll;
  const tallies = poll?.options.map((o) => `${o.votes}/${soak.model.votes.get(o.id) ?? 0}`) ?? [];
  const pollOk = poll?.options.every((o) => o.votes === (soak.model.votes.get(o.id) ?? 0)) === true;
  return [
    {
      name: 'every scheduled purchase ran exactly once, or was skipped without a charge for want of funds',
      ok: wrong.length === 0,
      detail: `${soak.model.schedules.length} schedules, ${skipped} skipped${wrong.length > 0 ? `: ${wrong.slice(0, 8).join('; ')}` : ''}`,
    },
    {
      name: 'the poll counts each accepted vote once',
      ok: pollOk,
      detail: `votes counted/accepted per option: ${tallies.join(', ')}`,
    },
  ];
}

export async function adminLedgerCheck(soak: Soak): Promise<Check> {
  const result = await must<{ ok: boolean; imbalances: unknown[] }>(
    call(soak.client, 'adminLedgerCheck', {}, { session: soak.admin, method: 'GET' }),
    'adminLedgerCheck',
  );
  return { name: 'adminLedgerCheck is ok', ok: result.ok, detail: `${result.imbalances.length} imbalances` };
}
