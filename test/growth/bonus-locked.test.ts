import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { systemAccounts, userAccount, userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { postBatch, post as postLedger } from '../../src/ledger/postings.ts';
import { koboToNaira, nairaToKobo } from '../../src/money.ts';
import { advanceClock } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { arbitraryOf, type Documented, documentedOperations } from '../helpers/schema-arbitrary.ts';
import {
  type ApiResponse,
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  sendRaw,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { fund, mtn, PIN } from '../vtu/purchase-support.ts';

// SPEC.md item 7, API.md section 9: "The locked bonus is never spendable, never withdrawable, never
// part of `balance`: no operation, job or admin action can move it out." A user who is also an admin
// (Tier 2, a PIN, ₦500 in the wallet) holds a locked referral bonus forty times that. Every operation
// that /openapi.json documents is called as that user with inputs generated from its request schema
// (the PIN the real one, so that money operations get as far as the debit) and, for every operation
// with an `amount`, with amounts above the wallet and within the wallet and the bonus together;
// the money operations are also called by hand with such amounts and must be refused for want of
// funds. Then every clock-driven job, the domain events, the maturity a year on and adminReconcile.
// Throughout and after: the bonus_locked account holds exactly the bonus, getWallet's lockedBonus is
// it and `balance` is the wallet account alone, no entry ever took from a bonus account, and the
// ledger check is ok. The ledger itself refuses a posting from bonus_locked, and the database a
// balance of one going down. BONUS_RUNS sets the generated inputs per operation (default 6).

const runsPerOperation = Number(process.env.BONUS_RUNS ?? 6);

/** Large next to the wallet, so that "more than the wallet, less than wallet and bonus" is a wide range. */
const bonusNaira = 20_000;
const walletNaira = 500;

/**
 * The operations that take money out of the wallet (API.md sections 5, 9 and 14) whose inputs
 * knownGood can make pass, so that the calls aimed at the bonus must reach the debit (a transfer once
 * it is documented). Any other operation with an amount gets the aimed calls all the same.
 */
const debitingOperations = [
  'createSavingsLock',
  'buyAirtime',
  'buyData',
  'subscribeCable',
  'buyElectricity',
  'fundBet',
  'buyEducationPin',
  'transferToUser',
];

/** Calls an operation as a client would: GET with query parameters, POST with {data} and a fresh key. */
async function send(world: World, op: Documented, input: unknown, token: string): Promise<ApiResponse> {
  const response = await sendRaw(world, op.method, op.name, input, token);
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as ApiResponse['body'],
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

type Wallet = { balance: number; lockedSavings: number; lockedBonus: number; checkinAccrued: number };

/**
 * Values that pass, by field name (`operation.field` first): sandbox catalogue ids and recipients
 * ending in 5 (delivered at once), so that a generated money operation reaches its debit.
 */
function knownGoodValues(invitee: () => SignedIn): Record<string, () => unknown> {
  return {
    pin: () => PIN,
    network: () => 'mtn',
    phone: () => mtn('5'),
    'transferToUser.phone': () => invitee().phone,
    'lookupRecipient.phone': () => invitee().phone,
    days: () => 30,
    identifier: () => 'gotv',
    iuc: () => '1234567895',
    'buyData.plan_id': () => '337',
    'subscribeCable.plan_id': () => 'gotv-jinja',
    subscription_type: () => 'renew',
    meter: () => '45678912345',
    plan: () => 'ikeja-electric',
    type: () => 'prepaid',
    betting_company: () => 'bet9ja',
    customer_id: () => '8765435',
    exam: () => 'waec',
    quantity: () => 1,
    link: () => 'https://example.com/post/5',
  };
}

describe(`the locked referral bonus never moves (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let holder: SignedIn;
  let invitee: SignedIn;
  const bonusKobo = nairaToKobo(bonusNaira);

  before(async () => {
    const phone = uniquePhone();
    world = await createWorld({ env: { ADMIN_PHONES: phone, REFERRAL_BONUS: String(bonusNaira) } });
    holder = await userAtTier(world, 2, await kycUser(world, undefined, phone));
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: holder.accessToken }));
    await fund(world, holder.userId, walletNaira);
    const { referralCode } = ok(
      await get<{ referralCode: string }>(world, 'getMe', {}, { token: holder.accessToken }),
    );
    // The invitee signs in the first time with the holder's code, and passes Tier 1.
    invitee = await userAtTier(world, 1, await signIn(world, uniquePhone(), { referralCode }));
    // The Tier 1 approval's domain event grows the holder's bonus (the worker's part, run here).
    await runDomainEvents(world);
  });
  after(() => world?.close());

  const balances = () => userBalances(world.ctx.db, holder.userId);
  const knownGood = knownGoodValues(() => invitee);

  /**
   * A generated input with the fields it names set to values that pass: `only` those, or all that
   * knownGood has (then without the optional fields it has not, which would be refused).
   */
  function withKnownGood(op: Documented, input: unknown, only?: string[]): unknown {
    if (!isObject(input)) return input;
    const properties = op.input.properties ?? {};
    const required = new Set(op.input.required ?? []);
    const patched: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(input)) {
      const good = knownGood[`${op.name}.${field}`] ?? knownGood[field];
      if (only !== undefined && !only.includes(field)) patched[field] = value;
      else if (good !== undefined) patched[field] = good();
      else if (only !== undefined || required.has(field)) patched[field] = value;
    }
    if (only === undefined) {
      for (const field of Object.keys(properties)) {
        const good = knownGood[`${op.name}.${field}`] ?? knownGood[field];
        if (!(field in patched) && good !== undefined) patched[field] = good();
      }
    }
    return patched;
  }

  /** The holder's bonus is exactly the one bonus, getWallet says so and keeps it out of `balance`. */
  async function assertBonusLocked(label: string): Promise<Wallet> {
    const b = await balances();
    assert.equal(b.bonus_locked, bonusKobo, `the bonus_locked account after ${label}`);
    assert.ok(b.wallet >= 0n, `the wallet below zero after ${label}`);
    const wallet = ok(await get<Wallet>(world, 'getWallet', {}, { token: holder.accessToken }));
    assert.equal(wallet.lockedBonus, bonusNaira, `getWallet's lockedBonus after ${label}`);
    assert.equal(
      wallet.balance,
      koboToNaira(b.wallet),
      `getWallet's balance is the wallet alone after ${label}`,
    );
    assert.equal(wallet.lockedSavings, koboToNaira(b.savings), label);
    assert.equal(wallet.checkinAccrued, koboToNaira(b.checkin_accrued), label);
    const { rows } = await sql<{ n: string | number }>`
      select count(*) as n from ledger_entries e join ledger_accounts a on a.id = e.account_id
      where a.code like 'bonus\\_locked:%' and e.amount < 0`.execute(world.ctx.db);
    assert.equal(Number(rows[0]!.n), 0, `an entry took from a locked bonus after ${label}`);
    return wallet;
  }

  async function assertLedgerOk(label: string): Promise<void> {
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, `ledger after ${label}: ${JSON.stringify(check.imbalances)}`);
  }

  /** A token that still works: after a signOut among the generated calls, or an expiry, a new sign-in. */
  async function holderToken(): Promise<string> {
    const me = await get(world, 'getMe', {}, { token: holder.accessToken });
    if (me.status === 401) await signInHolderAgain();
    return holder.accessToken;
  }

  async function signInHolderAgain(): Promise<void> {
    try {
      holder = await signInAgain(world, holder.phone);
    } catch (error) {
      // Ten codes per phone a day (API.md section 4): every generated signOut costs one.
      if (!String(error).includes('RATE_LIMITED')) throw error;
      world.ctx.sandboxClock!.advance(86_400);
      holder = await signIn(world, holder.phone);
    }
  }

  it('is granted once per invitee into bonus_locked, shown as lockedBonus and outside balance', async () => {
    const status = ok(
      await get<{ lockedBonus: number; invitees: Array<{ qualified: boolean }> }>(
        world,
        'getMyReferralStatus',
        {},
        { token: holder.accessToken },
      ),
    );
    assert.equal(status.lockedBonus, bonusNaira);
    assert.deepEqual(
      status.invitees.map((i) => i.qualified),
      [true],
    );
    const wallet = await assertBonusLocked('the grant');
    assert.equal(wallet.balance, walletNaira, 'the bonus is not part of balance');
    // The approval's event delivered again (a job runs at least once) grants nothing more.
    const approved = {
      type: 'kyc.tier_approved' as const,
      userId: invitee.userId,
      tier: 1,
      occurredAt: world.ctx.clock.now().toISOString(),
    };
    await world.ctx.events.dispatch(approved);
    await Promise.all([world.ctx.events.dispatch(approved), world.ctx.events.dispatch(approved)]);
    await assertBonusLocked('the approval delivered again');
    await assertLedgerOk('the grant');
  });

  it('pays for nothing: every money operation asked for more than the wallet and less than wallet and bonus is refused', async () => {
    const token = holder.accessToken;
    const { wallet: walletKobo } = await balances();
    assert.equal(walletKobo, nairaToKobo(walletNaira));
    const within = (naira: number) => naira > walletNaira && naira <= walletNaira + bonusNaira;
    const refused: Array<{ what: string; response: ApiResponse; codes: string[] }> = [];
    const attempt = async (
      what: string,
      operation: string,
      input: Record<string, unknown>,
      codes: string[],
    ) => {
      refused.push({ what, response: await post(world, operation, input, { token }), codes });
    };

    for (const amount of [
      walletNaira + 0.01,
      walletNaira + 100,
      walletNaira + bonusNaira / 2,
      walletNaira + bonusNaira,
    ]) {
      await attempt(`a lock of ₦${amount}`, 'createSavingsLock', { amount, days: 30 }, [
        'INSUFFICIENT_FUNDS',
      ]);
    }
    for (const amount of [walletNaira + 1, walletNaira + bonusNaira / 2, walletNaira + bonusNaira]) {
      await attempt(
        `airtime of ₦${amount}`,
        'buyAirtime',
        { network: 'mtn', phone: mtn('5'), amount, pin: PIN },
        ['INSUFFICIENT_FUNDS'],
      );
    }
    const dataPlans = ok(
      await get<{ items: Array<{ plan_id: string; amount: number }> }>(
        world,
        'listDataPlans',
        { network: 'mtn' },
        { token },
      ),
    ).items.filter((p) => within(p.amount));
    assert.ok(dataPlans.length > 0, 'an MTN data plan priced between the wallet and wallet and bonus');
    for (const plan of dataPlans.slice(0, 3)) {
      await attempt(
        `data plan ${plan.plan_id} at ₦${plan.amount}`,
        'buyData',
        { network: 'mtn', plan_id: plan.plan_id, phone: mtn('5'), amount: plan.amount, pin: PIN },
        ['INSUFFICIENT_FUNDS'],
      );
    }
    const cablePlans = ok(
      await get<{ items: Array<{ plan_id: string; amount: number }> }>(
        world,
        'listCablePlans',
        { identifier: 'gotv' },
        { token },
      ),
    ).items.filter((p) => within(p.amount));
    assert.ok(cablePlans.length > 0, 'a GOtv plan priced between the wallet and wallet and bonus');
    await attempt(
      `cable plan ${cablePlans[0]!.plan_id} at ₦${cablePlans[0]!.amount}`,
      'subscribeCable',
      {
        identifier: 'gotv',
        iuc: '1234567895',
        plan_id: cablePlans[0]!.plan_id,
        amount: cablePlans[0]!.amount,
        phone: mtn('5'),
        subscription_type: 'renew',
        pin: PIN,
      },
      ['INSUFFICIENT_FUNDS'],
    );
    await attempt(
      'electricity of ₦1,000',
      'buyElectricity',
      {
        plan: 'ikeja-electric',
        meter: '45678912345',
        type: 'prepaid',
        amount: 1_000,
        phone: mtn('5'),
        pin: PIN,
      },
      ['INSUFFICIENT_FUNDS'],
    );
    await attempt(
      `a bet account funded with ₦${walletNaira + bonusNaira}`,
      'fundBet',
      { betting_company: 'bet9ja', customer_id: '8765435', amount: walletNaira + bonusNaira, pin: PIN },
      ['INSUFFICIENT_FUNDS'],
    );
    // The exam pins' price is known from the PRICE_CHANGED answer; enough of them to cost more than the wallet.
    const quoted = failure(
      await post(
        world,
        'buyEducationPin',
        { exam: 'waec', quantity: 1, amount: 0.01, phone: mtn('5'), pin: PIN },
        { token },
      ),
    );
    assert.equal(quoted.code, 'PRICE_CHANGED', JSON.stringify(quoted));
    const pinPrice = quoted.details!.amount as number;
    const quantity = Math.min(10, Math.floor(walletNaira / pinPrice) + 1);
    assert.ok(within(pinPrice * quantity), `${quantity} WAEC pins at ₦${pinPrice}`);
    await attempt(
      `${quantity} WAEC pins`,
      'buyEducationPin',
      { exam: 'waec', quantity, amount: pinPrice * quantity, phone: mtn('5'), pin: PIN },
      ['INSUFFICIENT_FUNDS'],
    );
    // Nothing accrued, then one day's reward: below the withdrawal minimum either way.
    await attempt('a check-in withdrawal with nothing accrued', 'withdrawCheckin', {}, ['BELOW_MINIMUM']);
    ok(await post(world, 'claimCheckin', {}, { token }));
    await attempt("a check-in withdrawal of one day's reward", 'withdrawCheckin', {}, ['BELOW_MINIMUM']);
    // Operations the contract names that may come later: asked the same wherever they are documented.
    const documented = new Set(documentedOperations(await openApi()).map((op) => op.name));
    if (documented.has('transferToUser')) {
      await attempt(
        `a transfer of ₦${walletNaira + 100}`,
        'transferToUser',
        { phone: invitee.phone, amount: walletNaira + 100, pin: PIN },
        ['INSUFFICIENT_FUNDS'],
      );
    }

    for (const { what, response, codes } of refused) {
      const error = failure(response);
      assert.ok(codes.includes(error.code), `${what}: ${response.status} ${JSON.stringify(error)}`);
    }
    const after = await balances();
    assert.equal(after.wallet, walletKobo, 'the wallet paid for nothing');
    assert.equal(after.savings, 0n);
    assert.equal(after.checkin_accrued, world.ctx.config.growth.checkinRewardKobo);
    await assertBonusLocked('the refused money operations');

    // A lock the wallet can pay for, broken: the penalty comes out of the lock, never out of the bonus.
    const lock = ok(
      await post<{ id: string }>(world, 'createSavingsLock', { amount: 200, days: 7 }, { token }),
    );
    const broken = ok(
      await post<{ refunded: number; penalty: number }>(
        world,
        'breakSavingsLock',
        { lockId: lock.id },
        { token },
      ),
    );
    assert.deepEqual(broken, { ...broken, refunded: 190, penalty: 10 });
    assert.equal((await balances()).wallet, walletKobo - 1_000n);
    await assertBonusLocked('a lock broken');
    await assertLedgerOk('the money operations');
  });

  async function openApi() {
    return (await (await fetch(`${world.baseUrl}/openapi.json`)).json()) as Parameters<
      typeof documentedOperations
    >[0];
  }

  it('stays locked through every documented operation, every clock-driven job and every admin action', async () => {
    const operations = documentedOperations(await openApi());
    const names = operations.map((op) => op.name);
    assert.equal(new Set(names).size, names.length, 'operation names are unique');
    assert.ok(operations.length >= 50, `only ${operations.length} operations documented`);
    const covered = new Map<string, number>();
    /** The codes the inputs aimed at the bonus were answered with, per operation. */
    const aimedAnswers = new Map<string, string[]>();

    for (const op of operations) {
      const properties = op.input.properties ?? {};
      const hasAmount = 'amount' in properties;
      const generated = fc.sample(arbitraryOf(op.input), { numRuns: runsPerOperation });
      // Inputs as generated, with the holder's real PIN (a money operation then gets as far as its
      // debit); the same with the fields named in knownGood set to values that pass (the schema's
      // patterns and the sandbox's catalogues are not generated); and, for an operation with an
      // amount, those aimed at the bonus: `above` is naira more than the wallet holds at the call.
      const inputs: Array<{ input: unknown; above: number | null }> = [
        ...generated.map((input) => ({ input: withKnownGood(op, input, ['pin']), above: null })),
        ...generated
          .slice(0, Math.ceil(runsPerOperation / 2))
          .map((input) => ({ input: withKnownGood(op, input), above: null })),
      ];
      if (hasAmount) {
        const base = withKnownGood(op, generated.find(isObject) ?? {});
        for (const above of [0.01, 100, bonusNaira / 2, bonusNaira]) inputs.push({ input: base, above });
      }
      for (const entry of inputs) {
        // Purchases sent earlier have settled (a refund would otherwise land during this call).
        await world.ctx.modules.vtu.api.drained();
        const before = await balances();
        let input =
          entry.above === null
            ? entry.input
            : { ...(entry.input as object), amount: koboToNaira(before.wallet + nairaToKobo(entry.above)) };
        let response = await send(world, op, input, await holderToken());
        // A price the service fixes (a plan, exam pins): asked again at its price, when that is more
        // than the wallet and no more than wallet and bonus.
        const price = response.body.success ? undefined : response.body.error.details?.amount;
        if (
          entry.above !== null &&
          !response.body.success &&
          response.body.error.code === 'PRICE_CHANGED' &&
          typeof price === 'number' &&
          nairaToKobo(price) > before.wallet &&
          nairaToKobo(price) <= before.wallet + bonusKobo
        ) {
          covered.set(op.name, (covered.get(op.name) ?? 0) + 1);
          input = { ...(input as object), amount: price };
          response = await send(world, op, input, await holderToken());
        }
        const label = `${op.name} ${JSON.stringify(input)?.slice(0, 300)} → ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`;
        covered.set(op.name, (covered.get(op.name) ?? 0) + 1);
        if (entry.above !== null) {
          const code = response.body.success ? 'ok' : response.body.error.code;
          aimedAnswers.set(op.name, [...(aimedAnswers.get(op.name) ?? []), code]);
        }
        assert.ok(response.status !== 500, `a 500: ${label}`);
        const now = await balances();
        assert.equal(now.bonus_locked, bonusKobo, `the bonus moved: ${label}`);
        assert.ok(now.wallet >= 0n, `the wallet below zero: ${label}`);
        if (entry.above !== null) {
          // More than the wallet can pay: whatever the answer, nothing was paid out of it.
          assert.ok(now.wallet >= before.wallet, `paid with more than the wallet: ${label}`);
        }
      }
      await holderToken();
      await assertBonusLocked(op.name);
    }

    // Every clock-driven job and the queued domain events, before and after a year on the sandbox
    // clock (every lock a generated input made matures), and the admin actions by hand.
    await world.ctx.jobs.runClockDrivenJobs();
    await runDomainEvents(world);
    await advanceClock(world, 400 * 86_400);
    await world.ctx.jobs.runClockDrivenJobs();
    await runDomainEvents(world);
    await signInHolderAgain();
    const token = holder.accessToken;
    ok(await post(world, 'adminReconcile', {}, { token }));
    const check = ok(
      await get<{ ok: boolean; imbalances: unknown[] }>(world, 'adminLedgerCheck', {}, { token }),
    );
    assert.ok(check.ok, JSON.stringify(check.imbalances));
    const review = await post(
      world,
      'adminReviewKyc',
      { userId: invitee.userId, tier: 1, decision: 'reject', reason: 'no' },
      { token },
    );
    assert.ok(!review.body.success, 'an approved tier cannot be rejected afterwards');
    await runDomainEvents(world);

    const final = await assertBonusLocked('every operation, job and admin action');
    const b = await balances();
    assert.equal(b.savings, 0n, 'every lock matured or was broken');
    assert.equal(final.balance, koboToNaira(b.wallet));
    const status = ok(
      await get<{ lockedBonus: number }>(world, 'getMyReferralStatus', {}, { token: holder.accessToken }),
    );
    assert.equal(status.lockedBonus, bonusNaira);
    await assertLedgerOk('every operation, job and admin action');

    // Every name in the document was called: an operation added tomorrow is covered by this test.
    assert.deepEqual(
      names.filter((name) => (covered.get(name) ?? 0) === 0),
      [],
      'operations never called',
    );
    assert.equal(covered.size, operations.length);
    // And the generated calls aimed at the bonus reached the debit of every operation that debits
    // the wallet: refused there for want of funds, not only by validation.
    for (const name of debitingOperations.filter((n) => names.includes(n))) {
      const codes = aimedAnswers.get(name) ?? [];
      assert.ok(codes.includes('INSUFFICIENT_FUNDS'), `${name} aimed at the bonus: ${codes.join(', ')}`);
      assert.ok(!codes.includes('ok'), `${name} aimed at the bonus succeeded: ${codes.join(', ')}`);
    }
  });

  it('cannot be taken out by the ledger, whatever the caller, nor by a direct write to the database', async () => {
    const bonus = userAccount('bonus_locked', holder.userId);
    const before = await checkLedger(world.ctx.db);
    const now = world.ctx.clock.now();
    for (const to of [
      userAccount('wallet', holder.userId),
      systemAccounts.expenseRewards,
      systemAccounts.collectionsPool,
    ]) {
      await assert.rejects(
        postLedger(
          world.ctx.db,
          {
            reference: `bonus-out:${randomUUID()}`,
            description: 'Locked bonus moved out',
            entries: [
              { account: bonus, amount: -1n },
              { account: to, amount: 1n },
            ],
          },
          now,
        ),
        /can never be moved out/,
        `post() from ${bonus} to ${to}`,
      );
    }
    await assert.rejects(
      world.ctx.db.transaction().execute((trx) =>
        postBatch(
          trx,
          [
            {
              reference: `bonus-out:${randomUUID()}`,
              description: 'Locked bonus moved out',
              entries: [
                { account: bonus, amount: -bonusKobo },
                { account: userAccount('wallet', holder.userId), amount: bonusKobo },
              ],
            },
          ],
          now,
        ),
      ),
      /can never be moved out/,
      'postBatch() from the bonus',
    );
    for (const statement of [
      sql`update ledger_accounts set balance = balance - 1 where code = ${bonus}`,
      sql`update ledger_accounts set balance = 0 where code = ${bonus}`,
      sql`update ledger_accounts set balance = balance - 1 where code like 'bonus\\_locked:%'`,
      // Renamed first, its balance would no longer read as a bonus's.
      sql`update ledger_accounts set code = ${`renamed:${holder.userId}`} where code = ${bonus}`,
    ]) {
      await assert.rejects(statement.execute(world.ctx.db), /can never be moved out/);
    }
    assert.equal((await balances()).bonus_locked, bonusKobo);
    const afterCheck = await checkLedger(world.ctx.db);
    assert.ok(afterCheck.ok, JSON.stringify(afterCheck.imbalances));
    assert.equal(afterCheck.entries, before.entries, 'no entry was written');
  });
});
