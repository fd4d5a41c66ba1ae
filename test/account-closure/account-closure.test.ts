import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { publishEvent } from '../../src/events/domain-events.ts';
import { userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { e164 } from '../auth/support.ts';
import { report } from '../disputes/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  passOtpResendWindow,
  post,
  type SignedIn,
  signIn,
  type World,
} from '../helpers/world.ts';
import {
  documentCount,
  kycUser,
  matchingNin,
  submissions,
  submitTier1,
  submitTier2,
  submitTier3,
} from '../kyc/kyc-support.ts';
import { create as createSchedule, fromNow, notificationsOf, refreshed } from '../schedules/support.ts';
import { advanceClock, bought, buyCall, buyer, fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  cancelDeletion,
  creditKobo,
  deletionOf,
  emptyWallet,
  holdKobo,
  refusedWith,
  requestDeletion,
} from './support.ts';

// Closing an account (API.md 17.3, decision 0047) over HTTP: the request refused with every reason
// that applies (each alone, then all together, in the contract's order), the PIN's errors, the grace
// period and its cancellation, the closing job at the effective time (driven by the sandbox clock),
// a reason that applies again at that time, what the closing deletes, replaces and keeps, the phone
// and NIN free for a new person, and the erasure of the KYC records after RETENTION_YEARS.

const DAY = 24 * 60 * 60;
const everyReason = [
  'balance_not_zero',
  'held_balance',
  'purchases_processing',
  'open_dispute',
  'active_savings',
  'active_schedules',
];

describe(`closing an account (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world?.close());

  /** A person with each reason set up by `arrange`, and nothing else, then asked to close. */
  async function reasonsAlone(arrange: (user: SignedIn) => Promise<void>): Promise<string[]> {
    const user = await buyer(world, 0);
    await arrange(user);
    return refusedWith(await requestDeletion(world, user), 'a reason applies');
  }

  const arrangements: Record<string, (user: SignedIn) => Promise<void>> = {
    balance_not_zero: (user) => fund(world, user.userId, 1),
    held_balance: (user) => holdKobo(world, user.userId, 50_000n),
    purchases_processing: async (user) => {
      await fund(world, user.userId, 1_000);
      // The sandbox answers pending for a number ending in 2: it stays processing until a requery.
      const accepted = ok(
        await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('2'), amount: 100 }),
      );
      await world.ctx.modules.vtu.api.sendEnded(accepted.id);
      await emptyWallet(world, user.userId);
    },
    open_dispute: async (user) => {
      await fund(world, user.userId, 1_000);
      const purchase = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 100,
      });
      assert.equal(purchase.status, 'success');
      ok(await report(world, user, purchase.reference));
      await emptyWallet(world, user.userId);
    },
    active_savings: async (user) => {
      await fund(world, user.userId, 1_000);
      ok(await post(world, 'createSavingsLock', { amount: 500, days: 30 }, { token: user.accessToken }));
      await emptyWallet(world, user.userId);
    },
    active_schedules: async (user) => {
      await createSchedule(world, user, {
        service: 'airtime',
        order: { network: 'mtn', phone: mtn('5'), amount: 100 },
        startAt: fromNow(world, DAY),
        every: 'day',
      });
    },
  };

  it('refuses with each reason alone, and with all of them at once in the contract order', async () => {
    for (const reason of everyReason) {
      assert.deepEqual(await reasonsAlone(arrangements[reason]!), [reason], reason);
    }
    // All six on one person: every one is listed, in the contract's order, whatever order they came in.
    const all = await buyer(world, 0);
    for (const reason of [...everyReason].reverse()) {
      if (reason !== 'balance_not_zero') await arrangements[reason]!(all);
    }
    await fund(world, all.userId, 5);
    assert.deepEqual(refusedWith(await requestDeletion(world, all), 'all at once'), everyReason);
    // The same reasons are what Settings shows before the PIN is asked, and nothing is pending.
    assert.deepEqual(await deletionOf(world, all), { pending: null, reasons: everyReason });
    assert.equal(
      (
        await world.ctx.db
          .selectFrom('account_closures')
          .select('id')
          .where('user_id', '=', all.userId)
          .execute()
      ).length,
      0,
      'a refusal records nothing',
    );
  });

  it('needs a signed-in person: no token is 401 for each operation', async () => {
    for (const [method, operation] of [
      ['POST', 'requestAccountDeletion'],
      ['POST', 'cancelAccountDeletion'],
      ['GET', 'getAccountDeletion'],
    ] as const) {
      const input = operation === 'requestAccountDeletion' ? { pin: PIN } : {};
      const answer =
        method === 'GET' ? await get(world, operation, input) : await post(world, operation, input);
      assert.deepEqual([answer.status, failure(answer).code], [401, 'UNAUTHENTICATED'], operation);
    }
  });

  it('checks the transaction PIN first: PIN_NOT_SET, INVALID_PIN with the attempts left, then PIN_LOCKED', async () => {
    const noPin = await signIn(world);
    const notSet = failure(await requestDeletion(world, noPin));
    assert.deepEqual([notSet.status, notSet.code], [403, 'PIN_NOT_SET']);

    // A person with money: the PIN is judged before the reasons, so a wrong one never learns them.
    const user = await buyer(world, 100);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const wrong = failure(await requestDeletion(world, user, '9999'));
      assert.deepEqual([wrong.status, wrong.code], [403, 'INVALID_PIN']);
      assert.equal((wrong.details as { attemptsLeft: number }).attemptsLeft, 5 - attempt);
    }
    const locked = failure(await requestDeletion(world, user, '9999'));
    assert.deepEqual([locked.status, locked.code], [423, 'PIN_LOCKED']);
    assert.equal(
      failure(await requestDeletion(world, user)).code,
      'PIN_LOCKED',
      'the right PIN too, while locked',
    );
  });

  it('cancels a pending request before its time; nothing is pending afterwards, and the account stays open', async () => {
    const user = await buyer(world, 0);
    const before = world.ctx.clock.now().getTime();
    const asked = ok(await requestDeletion(world, user));
    const graceMs = Date.parse(asked.effectiveAt) - 7 * DAY * 1000;
    assert.ok(
      graceMs >= before && graceMs <= world.ctx.clock.now().getTime(),
      'ACCOUNT_DELETION_GRACE_DAYS (7) on',
    );
    // Asking again while it is pending answers the same time: the grace period does not start again.
    assert.equal(ok(await requestDeletion(world, user)).effectiveAt, asked.effectiveAt);
    assert.equal((await deletionOf(world, user)).pending?.effectiveAt, asked.effectiveAt);

    const cancelled = ok(await cancelDeletion(world, user));
    assert.ok(!Number.isNaN(Date.parse(cancelled.cancelledAt)));
    assert.deepEqual(await deletionOf(world, user), { pending: null, reasons: [] });
    const again = failure(await cancelDeletion(world, user));
    assert.deepEqual([again.status, again.code], [409, 'CONFLICT'], 'nothing left to cancel');

    await advanceClock(world, 8 * DAY);
    const later = await refreshed(world, user);
    const me = ok(await get<{ id: string; phone: string }>(world, 'getMe', {}, { token: later.accessToken }));
    assert.deepEqual([me.id, me.phone], [user.userId, e164(user.phone)], 'still open');

    // A cancellation after its time has come is refused: the closing job decides it then.
    const late = await buyer(world, 0);
    ok(await requestDeletion(world, late));
    world.ctx.sandboxClock!.advance(7 * DAY);
    const tooLate = failure(await cancelDeletion(world, await refreshed(world, late)));
    assert.deepEqual([tooLate.status, tooLate.code], [409, 'CONFLICT']);
    await advanceClock(world, 60);
  });

  it('does not close when a reason applies again at the effective time: the request is cancelled and the person told why', async () => {
    const user = await buyer(world, 0);
    ok(await requestDeletion(world, user));
    // While it waits the account is used as before: money comes in, and signing in again cancels nothing.
    await creditKobo(world, user.userId, 2_500n);
    passOtpResendWindow(world);
    const again = await signIn(world, user.phone);
    assert.equal(again.userId, user.userId);
    assert.notEqual((await deletionOf(world, again)).pending, null, 'signing in cancels nothing');

    await advanceClock(world, 7 * DAY + 60);
    const later = await refreshed(world, again);
    assert.deepEqual(await deletionOf(world, later), { pending: null, reasons: ['balance_not_zero'] });
    const row = await world.ctx.db
      .selectFrom('account_closures')
      .select(['status', 'cancelled_by', 'cancel_reasons'])
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, {
      status: 'cancelled',
      cancelled_by: 'service',
      cancel_reasons: ['balance_not_zero'],
    });
    assert.equal(
      (await userBalances(world.ctx.db, user.userId)).wallet,
      2_500n,
      'nothing of the money moved',
    );

    await runDomainEvents(world);
    const told = (await notificationsOf(world, later)).filter((n) => n.kind.startsWith('account_clos'));
    assert.deepEqual(
      told.map((n) => [n.kind, n.data.reasons ?? null]),
      [
        ['account_closure_cancelled', ['balance_not_zero']],
        ['account_closing', null],
      ],
    );
    assert.match(told[0]!.body, /was not closed, because your wallet still has money in it/);
  });

  describe('an account that closes', () => {
    let person: SignedIn;
    let nin: string;
    let documentId: string;

    it('closes at the effective time: sessions, devices, beneficiaries and schedules deleted, a pseudonym in place, records kept', async () => {
      nin = matchingNin();
      person = await kycUser(world);
      assert.equal(ok(await submitTier1(world, person)).status, 'approved');
      assert.equal(ok(await submitTier2(world, person, { nin })).status, 'approved');
      const tier3 = ok(await submitTier3(world, person));
      documentId = tier3.documentId!;
      ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: person.accessToken }));
      ok(
        await post(
          world,
          'saveBeneficiary',
          { service: 'airtime', label: 'Mum', recipient: '08031234567' },
          { token: person.accessToken },
        ),
      );
      const device = (await (
        await fetch(`${world.baseUrl}/__sandbox/push/subscriptions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        })
      ).json()) as { data: { endpoint: string; keys: { p256dh: string; auth: string } } };
      ok(
        await post(
          world,
          'savePushSubscription',
          { endpoint: device.data.endpoint, p256dh: device.data.keys.p256dh, auth: device.data.keys.auth },
          { token: person.accessToken },
        ),
      );
      const schedule = await createSchedule(world, person, {
        service: 'airtime',
        order: { network: 'mtn', phone: mtn('5'), amount: 100 },
        startAt: fromNow(world, DAY),
        every: 'week',
      });
      ok(await post(world, 'cancelSchedule', { id: schedule.id }, { token: person.accessToken }));
      await fund(world, person.userId, 300);
      const purchase = await bought(world, person, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 100,
      });
      assert.equal(purchase.status, 'success');
      await emptyWallet(world, person.userId);

      const asked = ok(await requestDeletion(world, person));
      await runDomainEvents(world);
      assert.ok(
        (await notificationsOf(world, person)).some((n) => n.kind === 'account_closing'),
        'told of the request',
      );
      await advanceClock(world, 6 * DAY);
      const stillOpen = await refreshed(world, person);
      ok(await get(world, 'getMe', {}, { token: stillOpen.accessToken }));
      assert.equal((await deletionOf(world, stillOpen)).pending?.effectiveAt, asked.effectiveAt);

      await advanceClock(world, DAY + 60);
      // Never signed in to again: the access token, the refresh token and the phone lead nowhere.
      const gone = failure(await get(world, 'getMe', {}, { token: stillOpen.accessToken }));
      assert.deepEqual([gone.status, gone.code], [401, 'UNAUTHENTICATED']);
      const noRefresh = failure(
        await post(world, 'refreshSession', { refreshToken: stillOpen.refreshToken }),
      );
      assert.equal(noRefresh.status, 401);

      const user = await world.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', person.userId)
        .executeTakeFirstOrThrow();
      assert.match(user.phone, /^deleted:[0-9a-f-]{36}$/, 'the phone is a pseudonym');
      assert.deepEqual(
        [user.first_name, user.last_name, user.email, user.pin_hash, user.kyc_tier],
        ['Closed account', null, null, null, 2],
      );
      assert.notEqual(user.closed_at, null);
      const countOf = async (
        table: 'sessions' | 'beneficiaries' | 'schedules' | 'push_subscriptions' | 'notifications',
      ) =>
        (
          await world.ctx.db
            .selectFrom(table)
            .select('user_id')
            .where('user_id', '=', person.userId)
            .execute()
        ).length;
      assert.deepEqual(
        [
          await countOf('sessions'),
          await countOf('push_subscriptions'),
          await countOf('beneficiaries'),
          await countOf('schedules'),
          await countOf('notifications'),
        ],
        [0, 0, 0, 0, 0],
        'sessions, devices, beneficiaries, schedules and the inbox deleted',
      );
      // Kept for RETENTION_YEARS under the pseudonym: the purchase, the ledger, the KYC records.
      const kept = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select('id')
        .where('user_id', '=', person.userId)
        .execute();
      assert.equal(kept.length, 1, 'the purchase record is kept');
      const held = await submissions(world, person.userId);
      assert.equal(held.length, 3, 'every KYC submission is kept');
      assert.equal(await documentCount(world, person.userId), 1, 'the ID document is kept');
      const check = await checkLedger(world.ctx.db);
      assert.ok(check.ok, `ledger check: ${JSON.stringify(check.imbalances)}`);
    });

    it('tells an operator, once, of money that still reaches the closed account', async () => {
      // A bank transfer into the dedicated account the provider still keeps open: never refused.
      const deposit = {
        type: 'funding.bank_deposit_credited' as const,
        userId: person.userId,
        reference: `dep_${person.userId}`,
        accountNumber: '9900000099',
        amountKobo: '500000',
        occurredAt: world.ctx.clock.now().toISOString(),
      };
      await publishEvent(world.ctx.jobs, world.ctx.db, deposit);
      await publishEvent(world.ctx.jobs, world.ctx.db, deposit);
      await runDomainEvents(world);
      const alerts = await world.ctx.db
        .selectFrom('ops_alerts')
        .select(['kind', 'details'])
        .where('kind', '=', 'credit_to_closed_account')
        .execute();
      assert.equal(alerts.length, 1, 'one alert for the one credit');
      assert.deepEqual(
        [
          (alerts[0]!.details as { userId: string }).userId,
          (alerts[0]!.details as { amountKobo: string }).amountKobo,
        ],
        [person.userId, '500000'],
      );
    });

    it('frees the phone and the NIN: the same phone signs in as a new person, who verifies the same NIN', async () => {
      passOtpResendWindow(world);
      const newcomer = await kycUser(world, { firstName: 'Chiamaka', lastName: 'Eze' }, person.phone);
      assert.notEqual(newcomer.userId, person.userId, 'a new user, never the closed one');
      const me = ok(
        await get<{ id: string; phone: string }>(world, 'getMe', {}, { token: newcomer.accessToken }),
      );
      assert.equal(me.phone, e164(person.phone));
      assert.equal(ok(await submitTier1(world, newcomer)).status, 'approved');
      assert.equal(ok(await submitTier2(world, newcomer, { nin })).status, 'approved', 'the same NIN');
      // The closed account's submission is still there, holding the NIN no longer.
      const old = (await submissions(world, person.userId, 2))[0]!;
      assert.deepEqual(
        [old.status, old.nin_hash],
        ['approved', (await submissions(world, newcomer.userId, 2))[0]!.nin_hash],
      );
    });

    it('erases the KYC documents and submissions after RETENTION_YEARS, keeping the ledger and the purchases', async () => {
      await advanceClock(world, 4 * 365 * DAY);
      assert.equal(await documentCount(world, person.userId), 1, 'kept four years on');
      const store = world.ctx.kyc.documents;
      const key = (
        await world.ctx.db
          .selectFrom('kyc_documents')
          .select('storage_key')
          .where('id', '=', documentId)
          .executeTakeFirstOrThrow()
      ).storage_key;
      assert.notEqual(await store.get(key), null);

      await advanceClock(world, 366 * DAY + DAY);
      assert.equal(await documentCount(world, person.userId), 0, 'the document is erased');
      assert.equal(await store.get(key), null, 'and its bytes with it');
      assert.deepEqual(await submissions(world, person.userId), [], 'the submissions are erased');
      const purchases = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select('id')
        .where('user_id', '=', person.userId)
        .execute();
      assert.equal(purchases.length, 1, 'the purchase record stays');
      const closure = await world.ctx.db
        .selectFrom('account_closures')
        .select(['status', 'erased_at'])
        .where('user_id', '=', person.userId)
        .executeTakeFirstOrThrow();
      assert.equal(closure.status, 'closed');
      assert.notEqual(closure.erased_at, null);
      const check = await checkLedger(world.ctx.db);
      assert.ok(check.ok, `ledger check: ${JSON.stringify(check.imbalances)}`);
    });
  });
});
