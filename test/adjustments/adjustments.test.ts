import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { AdjustmentView } from '../../src/adjustments/schemas.ts';
import { balancesOf, systemAccounts } from '../../src/ledger/accounts.ts';
import { nairaMax } from '../../src/money-schemas.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  type ApiResponse,
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';

// Adjustments, four eyes (API.md section 17.4) over HTTP: one operator proposes a correction of a
// person's wallet, another approves it (one posting against the adjustments account) or rejects it;
// the person sees it in their history as kind `adjustment` with the reason, and is told. PGlite runs
// one transaction at a time, so the races prove something only on PostgreSQL, where the requests are
// split across two services on one database (two processes' pools).

type AdjustmentPage = { items: AdjustmentView[]; limit: number; offset: number; total: number };
type WalletEntry = {
  reference: string;
  kind: string;
  description: string;
  direction: 'credit' | 'debit';
  amount: number;
  balanceAfter: number;
};
type Inbox = { items: Array<{ kind: string; title: string; body: string; data: Record<string, unknown> }> };

async function services(env: Record<string, string>): Promise<World[]> {
  const world = await createWorld({ env });
  if (!onPostgres()) return [world];
  return [world, await createWorld({ env, sameDatabaseAs: world })];
}

function concurrently(
  worlds: World[],
  count: number,
  send: (world: World, i: number) => Promise<ApiResponse>,
) {
  return Promise.all(Array.from({ length: count }, (_, i) => send(worlds[i % worlds.length]!, i)));
}

function assertNoServerErrors(answers: ApiResponse[]): void {
  assert.deepEqual(
    answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
    [],
    'no request may answer 5xx',
  );
}

const e164 = (phone: string) => `+234${phone.slice(1)}`;

describe(`adjustments (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  // Three operators: a proposer and two who may approve (the races have both approve at once).
  const adminPhones = [uniquePhone(), uniquePhone(), uniquePhone()];
  let worlds: World[];
  let world: World;
  let admins: SignedIn[];
  before(async () => {
    // The people corrected here are Tier 0, and the largest credits pass any maximum balance: no
    // maximum, so that each lands in the wallet (the held balance of a credit has its own tests).
    worlds = await services({ ADMIN_PHONES: adminPhones.join(','), LIMIT_TIER0_BALANCE: 'none' });
    world = worlds[0]!;
    admins = [];
    for (const phone of adminPhones) admins.push(await signIn(world, phone));
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  const propose = (
    by: SignedIn,
    userId: string,
    direction: 'credit' | 'debit',
    amount: number,
    reason = 'Compensation for the outage of 3 December',
    on: World = world,
  ) =>
    post<AdjustmentView>(
      on,
      'adminProposeAdjustment',
      { userId, direction, amount, reason },
      { token: by.accessToken },
    );
  const approve = (by: SignedIn, id: string, on: World = world, idempotencyKey?: string) =>
    post<AdjustmentView>(
      on,
      'adminApproveAdjustment',
      { id },
      { token: by.accessToken, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) },
    );
  const reject = (by: SignedIn, id: string, reason = 'Not supported by the records', on: World = world) =>
    post<AdjustmentView>(on, 'adminRejectAdjustment', { id, reason }, { token: by.accessToken });
  const list = async (by: SignedIn, query: Record<string, unknown> = {}) =>
    ok(
      await get<AdjustmentPage>(
        world,
        'adminListAdjustments',
        { limit: 100, ...query },
        { token: by.accessToken },
      ),
    );
  const balance = async (user: SignedIn) =>
    ok(await get<{ balance: number }>(world, 'getWallet', {}, { token: user.accessToken })).balance;
  const history = async (user: SignedIn, query: Record<string, unknown> = {}) =>
    ok(
      await get<{ items: WalletEntry[] }>(
        world,
        'listTransactions',
        { limit: 100, ...query },
        {
          token: user.accessToken,
        },
      ),
    ).items;
  const ledgerOk = async () => {
    const check = ok(
      await get<{ ok: boolean; imbalances: unknown[] }>(
        world,
        'adminLedgerCheck',
        {},
        {
          token: admins[0]!.accessToken,
        },
      ),
    );
    assert.ok(check.ok, `ledger check: ${JSON.stringify(check.imbalances)}`);
  };
  const statusOf = async (id: string) => (await list(admins[0]!)).items.find((a) => a.id === id)?.status;
  /** A person whose wallet holds `naira`, credited by an approved adjustment. */
  const personWith = async (naira: number) => {
    const user = await signIn(world);
    if (naira > 0) {
      const proposed = ok(await propose(admins[0]!, user.userId, 'credit', naira, 'Opening balance'));
      ok(await approve(admins[1]!, proposed.id));
    }
    return user;
  };

  it('a credit proposed by one operator moves nothing until another approves it; then the wallet, the history with the reason, the inbox', async () => {
    const [proposer, approver] = [admins[0]!, admins[1]!];
    const user = await signIn(world);
    const reason = 'Compensation for the outage of 3 December';
    const proposed = ok(await propose(proposer, user.userId, 'credit', 1_500.5, reason));
    assert.equal(proposed.status, 'proposed');
    assert.deepEqual(
      [
        proposed.userId,
        proposed.phone,
        proposed.direction,
        proposed.amount,
        proposed.reason,
        proposed.proposedBy,
      ],
      [user.userId, e164(user.phone), 'credit', 1_500.5, reason, proposer.userId],
    );
    assert.ok(proposed.proposedAt);
    assert.equal(proposed.decidedAt, undefined);
    assert.equal(proposed.reference, undefined);
    assert.equal(await balance(user), 0);
    assert.deepEqual(await history(user), []);
    assert.ok((await list(approver, { status: 'proposed' })).items.some((a) => a.id === proposed.id));

    // Four eyes: the proposer cannot approve it, and nothing moves.
    const refused = expectError(await approve(proposer, proposed.id), 403, 'FORBIDDEN');
    assert.deepEqual(refused.details, { reason: 'four_eyes' });
    assert.equal(await statusOf(proposed.id), 'proposed');
    assert.equal(await balance(user), 0);

    const key = randomUUID();
    const approved = ok(await approve(approver, proposed.id, world, key));
    assert.equal(approved.status, 'approved');
    assert.equal(approved.decidedBy, approver.userId);
    assert.ok(approved.decidedAt);
    assert.equal(approved.reference, `adjustment:${proposed.id}`);
    assert.equal(await balance(user), 1_500.5);

    const entries = await history(user);
    assert.equal(entries.length, 1);
    const [entry] = entries;
    assert.deepEqual(
      [entry?.kind, entry?.direction, entry?.amount, entry?.balanceAfter, entry?.reference],
      ['adjustment', 'credit', 1_500.5, 1_500.5, approved.reference],
    );
    assert.match(entry!.description, /Compensation for the outage of 3 December/);
    assert.equal((await history(user, { kind: 'adjustment' })).length, 1);

    // The same key replays the first answer; a fresh one finds it decided.
    const replayed = await approve(approver, proposed.id, world, key);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(ok(replayed), approved);
    expectError(await approve(approver, proposed.id), 409, 'CONFLICT');
    expectError(await approve(admins[2]!, proposed.id), 409, 'CONFLICT');
    expectError(await reject(approver, proposed.id), 409, 'CONFLICT');
    assert.equal(await balance(user), 1_500.5);
    assert.ok((await list(approver, { status: 'approved' })).items.some((a) => a.id === proposed.id));
    assert.ok(!(await list(approver, { status: 'proposed' })).items.some((a) => a.id === proposed.id));

    await runDomainEvents(world);
    const told = ok(
      await get<Inbox>(world, 'listNotifications', { limit: 100 }, { token: user.accessToken }),
    ).items.filter((n) => n.kind === 'wallet_adjusted');
    assert.equal(told.length, 1);
    assert.equal(told[0]!.title, 'Wallet credited');
    assert.match(told[0]!.body, /₦1,500\.50 was added to your wallet: Compensation for the outage/);
    await ledgerOk();
  });

  it('a debit takes from the wallet, to zero and never below: refused with nothing posted, it stays proposed', async () => {
    const user = await personWith(1_000);
    const tooMuch = ok(await propose(admins[1]!, user.userId, 'debit', 1_000.01, 'Duplicate top-up'));
    const refused = expectError(await approve(admins[0]!, tooMuch.id), 409, 'INSUFFICIENT_FUNDS');
    assert.deepEqual(refused.details, { required: 1_000.01 });
    assert.equal(await balance(user), 1_000);
    assert.deepEqual(
      (await history(user)).map((e) => e.direction),
      ['credit'],
      'nothing was posted',
    );
    assert.equal(
      await statusOf(tooMuch.id),
      'proposed',
      'it waits for the wallet to cover it, or a rejection',
    );
    assert.equal(ok(await reject(admins[1]!, tooMuch.id, 'Too much')).status, 'rejected');

    const part = ok(
      await propose(admins[1]!, user.userId, 'debit', 400, 'Top-up credited twice on 4 December'),
    );
    ok(await approve(admins[0]!, part.id));
    assert.equal(await balance(user), 600);
    const [latest] = await history(user);
    assert.deepEqual(
      [latest?.kind, latest?.direction, latest?.amount, latest?.balanceAfter],
      ['adjustment', 'debit', 400, 600],
    );
    assert.match(latest!.description, /Top-up credited twice on 4 December/);

    const rest = ok(await propose(admins[1]!, user.userId, 'debit', 600, 'The rest of it'));
    ok(await approve(admins[2]!, rest.id));
    assert.equal(await balance(user), 0);

    await runDomainEvents(world);
    const told = ok(
      await get<Inbox>(world, 'listNotifications', { limit: 100 }, { token: user.accessToken }),
    ).items.filter((n) => n.title === 'Wallet debited');
    assert.equal(told.length, 2, 'the refused debit told nothing');
    await ledgerOk();
  });

  it('a rejection moves nothing; the proposer may withdraw; a decided one is 409 CONFLICT', async () => {
    const user = await signIn(world);
    const proposed = ok(await propose(admins[0]!, user.userId, 'credit', 250));
    const rejected = ok(await reject(admins[1]!, proposed.id, 'No outage on that day'));
    assert.deepEqual(
      [rejected.status, rejected.rejectReason, rejected.decidedBy, rejected.reference],
      ['rejected', 'No outage on that day', admins[1]!.userId, undefined],
    );
    assert.ok(rejected.decidedAt);
    expectError(await approve(admins[1]!, proposed.id), 409, 'CONFLICT');
    expectError(await reject(admins[2]!, proposed.id), 409, 'CONFLICT');
    assert.equal(await balance(user), 0);
    assert.deepEqual(await history(user), []);

    const withdrawn = ok(await propose(admins[0]!, user.userId, 'credit', 250));
    assert.equal(ok(await reject(admins[0]!, withdrawn.id, 'Proposed by mistake')).status, 'rejected');
    assert.ok((await list(admins[2]!, { status: 'rejected' })).items.some((a) => a.id === withdrawn.id));
    assert.equal(await balance(user), 0);
  });

  it('the person adjusted cannot approve their own adjustment, even as another operator', async () => {
    const own = ok(await propose(admins[0]!, admins[1]!.userId, 'credit', 100));
    const refused = expectError(await approve(admins[1]!, own.id), 403, 'FORBIDDEN');
    assert.deepEqual(refused.details, { reason: 'four_eyes' });
    assert.equal(ok(await approve(admins[2]!, own.id)).status, 'approved');
  });

  it("an operator's correction is made on a frozen account too, credit and debit", async () => {
    const user = await personWith(500);
    ok(
      await post(
        world,
        'adminFreezeUser',
        { userId: user.userId, reason: 'Suspected account takeover' },
        { token: admins[2]!.accessToken },
      ),
    );
    const debit = ok(await propose(admins[0]!, user.userId, 'debit', 200, 'Top-up credited twice'));
    assert.equal(ok(await approve(admins[1]!, debit.id)).status, 'approved');
    const credit = ok(await propose(admins[1]!, user.userId, 'credit', 50, 'Outage compensation'));
    assert.equal(ok(await approve(admins[0]!, credit.id)).status, 'approved');
    assert.equal(await balance(user), 350);
    await ledgerOk();
  });

  it('unknown ids are 404, a person is 403, no token is 401, bad input is 400', async () => {
    const user = await signIn(world);
    expectError(await propose(admins[0]!, randomUUID(), 'credit', 10), 404, 'NOT_FOUND');
    expectError(await approve(admins[1]!, randomUUID()), 404, 'NOT_FOUND');
    expectError(await reject(admins[1]!, randomUUID()), 404, 'NOT_FOUND');
    expectError(await propose(user, user.userId, 'credit', 10), 403, 'FORBIDDEN');
    expectError(await get(world, 'adminListAdjustments', {}, { token: user.accessToken }), 403, 'FORBIDDEN');
    expectError(await get(world, 'adminListAdjustments', {}), 401, 'UNAUTHENTICATED');
    expectValidationAt(await propose(admins[0]!, user.userId, 'credit', 0), 'data.amount');
    expectValidationAt(await propose(admins[0]!, user.userId, 'credit', 1.001), 'data.amount');
    expectValidationAt(await propose(admins[0]!, user.userId, 'credit', 10, ' '), 'data.reason');
    expectValidationAt(await propose(admins[0]!, user.userId, 'credit', 10, 'x'.repeat(501)), 'data.reason');
    expectValidationAt(
      await post(
        world,
        'adminProposeAdjustment',
        { userId: user.userId, direction: 'refund', amount: 1, reason: 'r' },
        {
          token: admins[0]!.accessToken,
        },
      ),
      'data.direction',
    );
    assert.equal((await list(admins[0]!)).items.filter((a) => a.userId === user.userId).length, 0);
  });

  it('amounts above 2^53 kobo: refused at the edge, never rounded; exact to the kobo in the ledger beyond it', async () => {
    const user = await signIn(world);
    // Past 2^53 kobo (whole naira, so the number itself is exact): beyond what the edge carries to
    // the kobo (money.ts nairaKoboMax), so it is refused, never rounded.
    expectValidationAt(await propose(admins[0]!, user.userId, 'credit', 90_071_992_547_410), 'data.amount');

    // The largest amount that crosses the edge, credited to ten people: the adjustments account goes
    // ten times below it, past -2^53 kobo, to the kobo.
    const before = (await balancesOf(world.ctx.db, [systemAccounts.adjustments])).get(
      systemAccounts.adjustments,
    )!;
    const people: SignedIn[] = [];
    for (let i = 0; i < 10; i++) {
      const person = await signIn(world);
      people.push(person);
      const proposed = ok(await propose(admins[0]!, person.userId, 'credit', nairaMax, 'Largest credit'));
      assert.equal(proposed.amount, nairaMax);
      assert.equal(ok(await approve(admins[1]!, proposed.id)).amount, nairaMax);
      assert.equal(await balance(person), nairaMax);
    }
    const after = (await balancesOf(world.ctx.db, [systemAccounts.adjustments])).get(
      systemAccounts.adjustments,
    )!;
    assert.equal(before - after, 9_999_999_999_999_990n);
    assert.ok(after < -(2n ** 53n));
    await ledgerOk();

    // And back out, to the kobo.
    const back = ok(await propose(admins[0]!, people[0]!.userId, 'debit', nairaMax, 'Largest debit'));
    ok(await approve(admins[2]!, back.id));
    assert.equal(await balance(people[0]!), 0);
    await ledgerOk();
  });

  it('20 approvals of one adjustment at once, from two operators and two services: one posting, the rest 409 CONFLICT', async () => {
    const user = await signIn(world);
    const proposed = ok(await propose(admins[0]!, user.userId, 'credit', 700));
    const answers = await concurrently(worlds, 20, (w, i) => approve(admins[1 + (i % 2)]!, proposed.id, w));
    assertNoServerErrors(answers);
    assert.equal(answers.filter((a) => a.status === 200).length, 1, 'one approval wins');
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    assert.equal(await balance(user), 700);
    assert.deepEqual(
      (await history(user, { kind: 'adjustment' })).map((e) => e.amount),
      [700],
    );
    await ledgerOk();
  });

  it('approvals and rejections of one adjustment at once: it is decided once', async () => {
    const user = await signIn(world);
    const proposed = ok(await propose(admins[0]!, user.userId, 'credit', 300));
    const answers = await concurrently(worlds, 20, (w, i) =>
      i % 3 === 0
        ? reject(admins[1 + (i % 2)]!, proposed.id, undefined, w)
        : approve(admins[1 + (i % 2)]!, proposed.id, w),
    );
    assertNoServerErrors(answers);
    assert.equal(answers.filter((a) => a.status === 200).length, 1, 'one decision wins');
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    const status = await statusOf(proposed.id);
    assert.equal(await balance(user), status === 'approved' ? 300 : 0);
    assert.equal((await history(user)).length, status === 'approved' ? 1 : 0);
    await ledgerOk();
  });

  it('20 debits of one wallet approved at once: never below zero, exactly what it covers', async () => {
    const user = await personWith(1_000);
    const debits: AdjustmentView[] = [];
    for (let i = 0; i < 20; i++)
      debits.push(ok(await propose(admins[0]!, user.userId, 'debit', 100, `Debit ${i}`)));
    const answers = await concurrently(worlds, 20, (w, i) => approve(admins[1 + (i % 2)]!, debits[i]!.id, w));
    assertNoServerErrors(answers);
    assert.equal(answers.filter((a) => a.status === 200).length, 10, 'the wallet covers ten');
    for (const answer of answers.filter((a) => a.status !== 200))
      expectError(answer, 409, 'INSUFFICIENT_FUNDS');
    assert.equal(await balance(user), 0);
    assert.equal(
      (await history(user, { kind: 'adjustment' })).filter((e) => e.direction === 'debit').length,
      10,
    );
    assert.equal(
      (await list(admins[0]!, { status: 'proposed' })).items.filter((a) => a.userId === user.userId).length,
      10,
    );
    await ledgerOk();
  });
});
