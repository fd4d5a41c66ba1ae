import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import {
  type RequeryRequest,
  VtuProviderError,
  VtuRefusedLocally,
} from '../../src/providers/vtu/vtu-provider.ts';
import { vtuDispatchJob } from '../../src/vtu/dispatch.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import { createWorld, failure, get, ok, post, signIn, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import {
  advanceClock,
  bought,
  buyCall,
  buyer,
  current,
  mtn,
  PIN,
  recordedPurchases,
} from './purchase-support.ts';

// The six purchases end to end against the sandbox providers (SPEC.md "States and transitions",
// API.md sections 5 and 8): the state table by the recipient's last digit (1 fails and refunds, 2
// pending then success, 3 pending then failure, 4 no answer then success on requery, others at
// once), every refusal before a debit, and the money after each path.

/** A bound on purchases sent at once small enough for a test to fill. */
const sendsMax = 16;

describe(`VTU purchases (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    // A short provider timeout, so the "no answer" digit is an unknown outcome within the test.
    world = await createWorld({ env: { VTU_TIMEOUT_MS: '300', VTU_SENDS_MAX: String(sendsMax) } });
  });
  after(() => world.close());
  afterEach(async () => {
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });

  const wallet = async (userId: string) => (await userBalances(world.ctx.db, userId)).wallet;
  const recorded = (userId: string) => recordedPurchases(world, userId);
  /** Read from the database: after hours on the sandbox clock the buyer's access token has expired. */
  const statusOf = async (id: string) =>
    (
      await world.ctx.db
        .selectFrom('vtu_transactions')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).status;

  describe('the state table, by the last digit of the recipient', () => {
    it('any other digit: success at once, charged exactly the retail price, settled to the provider', async () => {
      const user = await buyer(world, 5_000);
      const done = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 });
      assert.equal(done.status, 'success');
      assert.equal(done.amount, 500, 'no markup configured: the face value');
      assert.equal(done.service, 'airtime');
      assert.equal(done.provider, 'bills');
      assert.equal(await wallet(user.userId), 450_000n);
    });

    it('1: the provider fails it; the wallet gets back exactly what it paid; failed with a reason', async () => {
      const user = await buyer(world, 5_000);
      const done = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 700 });
      assert.equal(done.status, 'failed');
      assert.ok(done.failureReason !== undefined);
      assert.equal(await wallet(user.userId), 500_000n, 'refunded in full');
    });

    it('2: pending, no refund; the requery on the sandbox clock finds it delivered', async () => {
      const user = await buyer(world, 5_000);
      const pending = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('2'),
        amount: 300,
      });
      assert.equal(pending.status, 'processing');
      assert.equal(await wallet(user.userId), 470_000n, 'charged, not refunded while pending');
      await advanceClock(world, 61);
      const done = await current(world, user, pending.id);
      assert.equal(done.status, 'success');
      assert.equal(await wallet(user.userId), 470_000n);
    });

    it('3: pending, then the requery says failed: refunded once, exactly', async () => {
      const user = await buyer(world, 5_000);
      const pending = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('3'),
        amount: 300,
      });
      assert.equal(pending.status, 'processing');
      await advanceClock(world, 61);
      assert.equal((await current(world, user, pending.id)).status, 'failed');
      assert.equal(await wallet(user.userId), 500_000n);
      await advanceClock(world, 3_600);
      assert.equal(await wallet(user.userId), 500_000n, 'a later requery run refunds nothing more');
    });

    it('4: no answer (timeout) is unknown: processing, no refund; the requery finds it delivered', async () => {
      const user = await buyer(world, 5_000);
      const unknown = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('4'),
        amount: 200,
      });
      assert.equal(unknown.status, 'processing');
      assert.equal(await wallet(user.userId), 480_000n);
      await advanceClock(world, 61);
      assert.equal((await current(world, user, unknown.id)).status, 'success');
      assert.equal(await wallet(user.userId), 480_000n);
    });

    it('a purchase the provider never settles: one stuck alert after 30 minutes, never refunded', async () => {
      const user = await buyer(world, 5_000);
      // Digit 4: no answer to the purchase, an unknown outcome.
      const stuck = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('4'), amount: 250 });
      const bills = world.ctx.vtuProviders.bills;
      const requery = bills.requery;
      // From now on the provider says pending, however often it is asked.
      bills.requery = async () => ({ status: 'pending', providerReference: null });
      try {
        assert.equal(stuck.status, 'processing');
        const alertsOf = () =>
          world.ctx.db
            .selectFrom('ops_alerts')
            .select(['kind', 'details'])
            .where('kind', '=', 'vtu_purchase_stuck')
            .execute()
            .then((rows) =>
              rows.filter((r) => (r.details as { purchaseId?: string }).purchaseId === stuck.id),
            );
        await advanceClock(world, 29 * 60);
        assert.deepEqual(await alertsOf(), [], 'not yet: 29 minutes');
        await advanceClock(world, 2 * 60);
        assert.equal((await alertsOf()).length, 1, 'alerted once past 30 minutes');
        await advanceClock(world, 3 * 3_600);
        assert.equal((await alertsOf()).length, 1, 'and not again');
        assert.equal(await statusOf(stuck.id), 'processing');
        assert.equal(await wallet(user.userId), 475_000n, 'charged, never refunded blindly');
      } finally {
        bills.requery = requery;
      }
      // When the provider answers again, the next requery settles it.
      await advanceClock(world, 3_600);
      assert.equal(await statusOf(stuck.id), 'success');
      assert.equal(await wallet(user.userId), 475_000n);
    });

    it('an adapter error is an unknown outcome, never a refund; only a refusal before sending fails it', async () => {
      const user = await buyer(world, 5_000);
      const bills = world.ctx.vtuProviders.bills;
      const purchase = bills.purchase;
      try {
        bills.purchase = async () => {
          throw new VtuProviderError('bills', 'purchase did not answer within 20000 ms');
        };
        const lost = await bought(world, user, 'buyAirtime', {
          network: 'mtn',
          phone: mtn('5'),
          amount: 200,
        });
        assert.equal(lost.status, 'processing', 'it may have reached the provider: requeried, not refunded');
        assert.equal(await wallet(user.userId), 480_000n);

        bills.purchase = async () => {
          throw new VtuRefusedLocally('bills', 'purchase refused locally: not a VTpass request id');
        };
        const refused = await bought(world, user, 'buyAirtime', {
          network: 'mtn',
          phone: mtn('5'),
          amount: 300,
        });
        assert.equal(refused.status, 'failed', 'nothing was sent: refunded');
        assert.equal(await wallet(user.userId), 480_000n);
      } finally {
        bills.purchase = purchase;
      }
    });

    it('the provider is called once per reference, however many runs race to send it', async () => {
      const user = await buyer(world, 5_000);
      const bills = world.ctx.vtuProviders.bills;
      const purchase = bills.purchase;
      const sent: string[] = [];
      // The provider holds its first answer, so the first send is still in flight when the others run.
      let answer!: () => void;
      const held = new Promise<void>((resolve) => {
        answer = resolve;
      });
      bills.purchase = async (request) => {
        sent.push(request.reference);
        if (sent.length === 1) await held;
        return purchase(request);
      };
      try {
        const accepted = ok(
          await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('6'), amount: 100 }),
        );
        // The inline send and the durable job twice (a retry, a second worker) race. Whichever claims
        // it first is held in flight; the provider answers once the other two have finished.
        let othersDone!: () => void;
        const twoFinished = new Promise<void>((resolve) => {
          othersDone = resolve;
        });
        let finished = 0;
        const attempts = [
          world.ctx.modules.vtu.api.sendEnded(accepted.id),
          world.ctx.jobs.runNow(vtuDispatchJob, { ids: [accepted.id] }),
          world.ctx.jobs.runNow(vtuDispatchJob, { ids: [accepted.id] }),
        ].map((attempt) =>
          attempt.then(() => {
            finished += 1;
            if (finished === 2) othersDone();
          }),
        );
        await twoFinished;
        answer();
        await Promise.all(attempts);
        assert.deepEqual(sent, [accepted.reference]);
        assert.equal((await current(world, user, accepted.id)).status, 'success');
      } finally {
        answer();
        bills.purchase = purchase;
      }
    });
  });

  describe('refusals before any debit', () => {
    it('NETWORK_MISMATCH: a Glo number bought as MTN is refused, nothing charged, nothing recorded', async () => {
      const user = await buyer(world, 1_000);
      const refused = failure(
        await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: '08051234565', amount: 100 }),
      );
      assert.equal(refused.status, 422);
      assert.equal(refused.code, 'NETWORK_MISMATCH');
      assert.equal(await wallet(user.userId), 100_000n);
      const list = ok(
        await get<{ total: number }>(world, 'listMyVtuTransactions', {}, { token: user.accessToken }),
      );
      assert.equal(list.total, 0);
    });

    it('5-digit prefixes first: 07025… is MTN (not Smile), so it buys as MTN', async () => {
      const user = await buyer(world, 1_000);
      const done = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: '07025123456',
        amount: 100,
      });
      assert.equal(done.status, 'success');
    });

    it('INSUFFICIENT_FUNDS, INVALID_PIN, Tier 1 required, BELOW_MINIMUM', async () => {
      const poor = await buyer(world, 50);
      const broke = failure(
        await buyCall(world, poor, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      );
      assert.equal(broke.code, 'INSUFFICIENT_FUNDS');
      assert.equal(await wallet(poor.userId), 5_000n);

      const wrongPin = failure(
        await post(
          world,
          'buyAirtime',
          { network: 'mtn', phone: mtn('5'), amount: 50, pin: '0000' },
          { token: poor.accessToken },
        ),
      );
      assert.equal(wrongPin.code, 'INVALID_PIN');

      const tier0 = await signIn(world);
      const noKyc = failure(
        await post(
          world,
          'buyAirtime',
          { network: 'mtn', phone: mtn('5'), amount: 50, pin: PIN },
          { token: tier0.accessToken },
        ),
      );
      assert.equal(noKyc.status, 403);
      assert.equal(noKyc.code, 'KYC_TIER_REQUIRED');

      const rich = await buyer(world, 5_000);
      const small = failure(
        await buyCall(world, rich, 'buyElectricity', {
          plan: 'ikeja-electric',
          meter: '45012345675',
          type: 'prepaid',
          amount: 999,
          phone: mtn('5'),
        }),
      );
      assert.equal(small.code, 'BELOW_MINIMUM');
      assert.deepEqual(small.details, { limit: 1_000 });
      assert.equal(await wallet(rich.userId), 500_000n);
    });
    it('PIN_NOT_SET, PIN_LOCKED after 5 wrong PINs, ABOVE_MAXIMUM, VALIDATION_ERROR: nothing charged or recorded', async () => {
      // Tier 1, but no PIN set yet.
      const noPin = await userAtTier(world, 1);
      const notSet = failure(
        await post(
          world,
          'buyAirtime',
          { network: 'mtn', phone: mtn('5'), amount: 100, pin: PIN },
          { token: noPin.accessToken },
        ),
      );
      assert.deepEqual([notSet.status, notSet.code], [403, 'PIN_NOT_SET']);

      const user = await buyer(world, 1_000);
      const wrong = () =>
        post(
          world,
          'buyAirtime',
          { network: 'mtn', phone: mtn('5'), amount: 100, pin: '9999' },
          { token: user.accessToken },
        );
      for (let attempt = 1; attempt <= 4; attempt++) {
        const refused = failure(await wrong());
        assert.equal(refused.code, 'INVALID_PIN');
        assert.equal((refused.details as { attemptsLeft: number }).attemptsLeft, 5 - attempt);
      }
      const locked = failure(await wrong());
      assert.deepEqual([locked.status, locked.code], [423, 'PIN_LOCKED']);
      assert.ok((locked.details as { retryAfterSeconds: number }).retryAfterSeconds > 0);
      // Locked: the right PIN is refused too, until the lock ends.
      const stillLocked = failure(
        await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      );
      assert.equal(stillLocked.code, 'PIN_LOCKED');

      const rich = await buyer(world, 100_000);
      const tooMuch = failure(
        await buyCall(world, rich, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 50_001 }),
      );
      assert.deepEqual([tooMuch.status, tooMuch.code], [422, 'ABOVE_MAXIMUM']);
      assert.deepEqual(tooMuch.details, { limit: 50_000 });
      const malformed = failure(
        await buyCall(world, rich, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 'a lot' }),
      );
      assert.deepEqual([malformed.status, malformed.code], [400, 'VALIDATION_ERROR']);

      for (const who of [noPin, user, rich]) {
        assert.equal(await recorded(who.userId), 0, 'no purchase recorded');
      }
      assert.equal(await wallet(user.userId), 100_000n, 'nothing charged');
      assert.equal(await wallet(rich.userId), 10_000_000n);
    });
  });

  describe('each purchase', () => {
    it('buyData at the plan price; another amount is 409 PRICE_CHANGED and charges nothing', async () => {
      const user = await buyer(world, 10_000);
      const plans = await world.ctx.vtuProviders.data.dataPlans('mtn');
      const plan = plans[0]!;
      const price = Number(plan.wholesaleKobo) / 100;
      const changed = failure(
        await buyCall(world, user, 'buyData', {
          network: 'mtn',
          plan_id: plan.planId,
          phone: mtn('5'),
          amount: price + 1,
        }),
      );
      assert.equal(changed.status, 409);
      assert.equal(changed.code, 'PRICE_CHANGED');
      assert.equal(await wallet(user.userId), 1_000_000n);
      const done = await bought(world, user, 'buyData', {
        network: 'mtn',
        plan_id: plan.planId,
        phone: mtn('5'),
        amount: price,
      });
      assert.equal(done.status, 'success');
      assert.equal(done.provider, 'data');
      assert.equal(await wallet(user.userId), 1_000_000n - plan.wholesaleKobo);
    });

    it('buyData the vendor never received: requeried with its send time, failed and refunded once not found', async () => {
      // The data vendor is found again by our reference in its order list, newest first; the send
      // time is how far back that read must go before "not there" means never received (the long
      // soak left 14 such purchases processing behind 1,900 newer orders).
      const user = await buyer(world, 10_000);
      const data = world.ctx.vtuProviders.data;
      const plan = (await data.dataPlans('mtn'))[0]!;
      const { purchase, requery } = data;
      const asked: RequeryRequest[] = [];
      try {
        data.purchase = async () => {
          throw new VtuProviderError('data', 'purchase did not answer within 20000 ms');
        };
        data.requery = async (request) => {
          asked.push(request);
          return requery(request);
        };
        const lost = await bought(world, user, 'buyData', {
          network: 'mtn',
          plan_id: plan.planId,
          phone: mtn('5'),
          amount: Number(plan.wholesaleKobo) / 100,
        });
        assert.equal(lost.status, 'processing');
        await advanceClock(world, 16 * 60);
        assert.equal(await statusOf(lost.id), 'failed');
        const row = await world.ctx.db
          .selectFrom('vtu_transactions')
          .select(['reference', 'sent_at'])
          .where('id', '=', lost.id)
          .executeTakeFirstOrThrow();
        const mine = asked.filter((request) => request.reference === row.reference);
        assert.ok(mine.length > 0, 'requeried');
        for (const request of mine) assert.equal(request.sentAt?.getTime(), row.sent_at?.getTime());
        assert.equal(await wallet(user.userId), 1_000_000n, 'refunded exactly once');
      } finally {
        data.purchase = purchase;
        data.requery = requery;
      }
    });

    it('a send still on its way when the clock jumps past 15 minutes is not judged lost: it lands and is charged once', async () => {
      // The sandbox clock moved two hours while a purchase's request had not reached its provider yet:
      // the requery that the move runs hears "not found" of a purchase that looks two hours old. Failing
      // it would refund a purchase the provider takes a moment later (a short soak refunded one).
      const user = await buyer(world, 10_000);
      const data = world.ctx.vtuProviders.data;
      const plan = (await data.dataPlans('mtn'))[0]!;
      const { purchase, requery } = data;
      let letThrough!: () => void;
      const onItsWay = new Promise<void>((resolve) => {
        letThrough = resolve;
      });
      let sending!: () => void;
      const sent = new Promise<void>((resolve) => {
        sending = resolve;
      });
      const answers: string[] = [];
      try {
        data.purchase = async (request) => {
          sending();
          await onItsWay;
          return purchase(request);
        };
        data.requery = async (request) => {
          const answer = await requery(request);
          answers.push(answer.status);
          return answer;
        };
        // Accepted; its send waits on the way (bought() would wait for the send to end).
        const late = ok(
          await buyCall(world, user, 'buyData', {
            network: 'mtn',
            plan_id: plan.planId,
            phone: mtn('5'),
            amount: Number(plan.wholesaleKobo) / 100,
          }),
        );
        assert.equal(late.status, 'processing');
        await sent;
        await advanceClock(world, 2 * 60 * 60);
        assert.deepEqual(answers, ['not_found'], 'the provider has not seen it yet');
        assert.equal(await statusOf(late.id), 'processing', 'not failed while its send is on its way');
        assert.equal(await wallet(user.userId), 1_000_000n - plan.wholesaleKobo);
        letThrough();
        await until(async () => (await statusOf(late.id)) === 'success');
        assert.equal(
          await wallet(user.userId),
          1_000_000n - plan.wholesaleKobo,
          'charged once, never refunded',
        );
      } finally {
        letThrough();
        data.purchase = purchase;
        data.requery = requery;
      }
    });

    it('buyElectricity: success carries the token and the units', async () => {
      const user = await buyer(world, 10_000);
      const done = await bought(world, user, 'buyElectricity', {
        plan: 'ikeja-electric',
        meter: '45012345675',
        type: 'prepaid',
        amount: 2_000,
        phone: mtn('5'),
      });
      assert.equal(done.status, 'success');
      assert.match(done.token ?? '', /\d{4}/);
      assert.ok(done.units !== undefined);
    });

    it('subscribeCable and fundBet', async () => {
      const user = await buyer(world, 50_000);
      const plan = (await world.ctx.vtuProviders.bills.cablePlans('dstv'))[0]!;
      const cable = await bought(world, user, 'subscribeCable', {
        identifier: 'dstv',
        iuc: '7012345675',
        plan_id: plan.planId,
        amount: Number(plan.wholesaleKobo) / 100,
        phone: mtn('5'),
      });
      assert.equal(cable.status, 'success');
      const company = (await world.ctx.vtuProviders.bills.bettingCompanies())[0]!;
      const bet = await bought(world, user, 'fundBet', {
        betting_company: company.id,
        customer_id: '12345675',
        amount: 1_000,
      });
      assert.equal(bet.status, 'success');
    });

    it('buyEducationPin: success carries the pins; jamb needs a profile id', async () => {
      const user = await buyer(world, 50_000);
      const item = (await world.ctx.vtuProviders.bills.educationItems()).find((i) => i.exam === 'waec')!;
      const done = await bought(world, user, 'buyEducationPin', {
        exam: 'waec',
        variation: item.variation,
        quantity: 2,
        amount: (Number(item.wholesaleKobo) * 2) / 100,
        phone: mtn('5'),
      });
      assert.equal(done.status, 'success');
      assert.equal(done.pins?.length, 2);
      const jamb = failure(
        await buyCall(world, user, 'buyEducationPin', {
          exam: 'jamb',
          quantity: 1,
          amount: 6_200,
          phone: mtn('5'),
        }),
      );
      assert.equal(jamb.status, 400);
    });
  });

  describe('reads', () => {
    it('listMyVtuTransactions: newest first, filtered, with the total; another user sees none of them', async () => {
      const user = await buyer(world, 5_000);
      const a = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
      const b = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 100 });
      const all = ok(
        await get<{ items: Array<{ id: string }>; total: number }>(
          world,
          'listMyVtuTransactions',
          {},
          { token: user.accessToken },
        ),
      );
      assert.deepEqual(
        all.items.map((i) => i.id),
        [b.id, a.id],
      );
      assert.equal(all.total, 2);
      const failedOnly = ok(
        await get<{ items: Array<{ id: string }>; total: number }>(
          world,
          'listMyVtuTransactions',
          { status: 'failed' },
          { token: user.accessToken },
        ),
      );
      assert.deepEqual(
        failedOnly.items.map((i) => i.id),
        [b.id],
      );
      // Dates the database cannot hold (year 0) or no purchase can have are a 400 naming the field.
      for (const query of [{ to: '0000-02-29' }, { from: '1969-12-31' }, { from: '0001-01-01T00:00:00Z' }]) {
        const refused = failure(
          await get(world, 'listMyVtuTransactions', query, { token: user.accessToken }),
        );
        assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR'], JSON.stringify(query));
        const field = Object.keys(query)[0];
        assert.deepEqual(
          (refused.details as { issues: Array<{ path: string[] }> }).issues.map((i) => i.path.join('.')),
          [`query.${field}`],
        );
      }
      const stranger = await userAtTier(world, 0);
      const theirs = failure(
        await post(world, 'getMyVtuTransaction', { id: a.id }, { token: stranger.accessToken }),
      );
      assert.equal(theirs.status, 404);
    });
  });

  it(`at most ${sendsMax} purchases are sent at once; the next wait before any debit`, async () => {
    const user = await buyer(world, 50_000);
    const bills = world.ctx.vtuProviders.bills;
    const purchase = bills.purchase;
    // The provider takes the calls and answers none until the gate opens.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let calls = 0;
    let full!: () => void;
    const allPlacesTaken = new Promise<void>((resolve) => {
      full = resolve;
    });
    bills.purchase = async (request) => {
      calls += 1;
      if (calls === sendsMax) full();
      await gate;
      return purchase(request);
    };
    try {
      const buys = Array.from({ length: sendsMax + 4 }, () =>
        buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      );
      await allPlacesTaken;
      // The other four have passed their checks and wait for a place: only then is "not debited"
      // evidence that the bound holds them, rather than that they have not arrived yet.
      await until(() => world.ctx.modules.vtu.api.sendsWaiting() === 4, 'four purchases waiting for a place');
      assert.equal(await recorded(user.userId), sendsMax, 'the rest wait, not yet debited');
      assert.equal(await wallet(user.userId), 5_000_000n - BigInt(sendsMax) * 10_000n);
      open();
      const answers = await Promise.all(buys);
      assert.ok(answers.every((a) => a.status === 200));
      await Promise.all(answers.map((a) => world.ctx.modules.vtu.api.sendEnded(ok(a).id)));
      assert.equal(calls, sendsMax + 4, 'each sent once');
      assert.equal(await wallet(user.userId), 5_000_000n - BigInt(sendsMax + 4) * 10_000n);
    } finally {
      open();
      bills.purchase = purchase;
    }
  });

  it('30 parallel purchases against a wallet that covers 3: exactly 3 accepted, the rest INSUFFICIENT_FUNDS', async () => {
    const user = await buyer(world, 300);
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 200);
    assert.equal(accepted.length, 3);
    for (const refused of answers.filter((a) => a.status !== 200))
      assert.equal(failure(refused).code, 'INSUFFICIENT_FUNDS');
    // ₦300 paid for exactly three ₦100 purchases: the balance is exact, and never went below zero.
    assert.equal(await wallet(user.userId), 0n);
    assert.equal(await recorded(user.userId), 3);
  });
});
