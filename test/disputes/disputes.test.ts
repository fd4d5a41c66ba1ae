import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import * as ownerChargeMigration from '../../src/db/migrations/2026-12-05T0800_dispute_owner_charge.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents, runDomainEvents } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { advanceClock, type Buyer, buyer } from '../vtu/purchase-support.ts';
import { adminDisputes, airtime, balance, myDisputes, report, resolve, walletHistory } from './support.ts';

// Disputes (API.md section 16) over HTTP: a person reports a problem with a movement they own, an
// operator refunds or declines it, the money moves once and within what was charged, and the person
// is told. The races are in races.test.ts.

type Inbox = { items: Array<{ kind: string; title: string; body: string; data: Record<string, unknown> }> };

describe(`disputes (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhone = uniquePhone();
  let world: World;
  let admin: SignedIn;
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
  });
  after(() => world.close());

  const inbox = async (user: SignedIn) => {
    await runDomainEvents(world);
    return ok(await get<Inbox>(world, 'listNotifications', { limit: 100 }, { token: user.accessToken }))
      .items;
  };

  it('a delivered purchase reported, then refunded by an operator: the wallet, the history, the inbox and the books', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    assert.equal(purchase.status, 'success');
    const afterPurchase = await balance(world, user);

    const opened = ok(await report(world, user, purchase.reference));
    assert.equal(opened.status, 'open');
    assert.equal(opened.reference, purchase.reference);
    assert.equal(opened.reason, 'token_not_received');
    assert.equal(opened.refunded, undefined);
    assert.equal(opened.resolvedAt, undefined);

    // The receipt finds its dispute by the purchase's reference, the history's row by its own.
    const debit = (await walletHistory(world, user)).find(
      (e) => e.purchaseId === purchase.id && e.kind === 'purchase',
    );
    assert.ok(debit !== undefined);
    for (const reference of [purchase.reference, debit.reference]) {
      const mine = await myDisputes(world, user, { reference });
      assert.deepEqual(
        mine.items.map((d) => d.id),
        [opened.id],
      );
    }

    // The operator sees the purchase, what was sent to the provider and what it answered.
    const queued = (await adminDisputes(world, admin, { status: 'open' })).items.find(
      (d) => d.id === opened.id,
    );
    assert.ok(queued !== undefined);
    assert.equal(queued.userId, user.userId);
    assert.equal(queued.phone, `+234${user.phone.slice(1)}`);
    assert.equal(queued.transaction.kind, 'purchase');
    assert.equal(queued.transaction.charged, purchase.amount);
    assert.equal(queued.transaction.purchase?.status, 'success');
    assert.equal(queued.transaction.purchase?.recipient, purchase.recipient);
    assert.ok(queued.transaction.exchange?.providerReference, 'the provider reference is shown');
    assert.ok(queued.transaction.exchange?.sentAt, 'when it was sent is shown');
    assert.ok(queued.transaction.exchange?.completedAt);
    assert.equal(queued.transaction.exchange?.request.service, 'airtime');
    assert.equal(queued.refundable, purchase.amount);

    const refunded = ok(
      await resolve(world, admin, opened.id, 'refund', { reason: 'The provider never delivered' }),
    );
    assert.equal(refunded.status, 'refunded');
    assert.equal(refunded.refunded, purchase.amount);
    assert.equal(refunded.resolution, 'The provider never delivered');
    assert.ok(refunded.resolvedAt);
    assert.equal(await balance(world, user), afterPurchase + purchase.amount);

    const [latest] = await walletHistory(world, user);
    assert.equal(latest?.kind, 'dispute_refund');
    assert.equal(latest?.direction, 'credit');
    assert.equal(latest?.amount, purchase.amount);
    assert.equal(latest?.purchaseId, purchase.id, 'the refund links to the purchase');
    assert.deepEqual(
      (await walletHistory(world, user, { kind: 'dispute_refund' })).map((e) => e.amount),
      [purchase.amount],
    );

    const told = (await inbox(user)).filter((n) => n.kind === 'dispute_resolved');
    assert.equal(told.length, 1);
    assert.equal(told[0]!.data.decision, 'refund');
    assert.equal(told[0]!.data.reference, purchase.reference);
    assert.match(told[0]!.body, /back in your wallet/);
    assert.match(told[0]!.body, /The provider never delivered/);

    // Resolved once: a second resolution, refund or decline, changes nothing.
    expectError(await resolve(world, admin, opened.id, 'refund'), 409, 'CONFLICT');
    expectError(await resolve(world, admin, opened.id, 'decline'), 409, 'CONFLICT');
    assert.equal(await balance(world, user), afterPurchase + purchase.amount);
    const [shown] = (await myDisputes(world, user)).items;
    assert.deepEqual([shown?.status, shown?.refunded], ['refunded', purchase.amount]);
    // The operator's list counts this dispute's own refund: nothing of the purchase is left to give.
    const resolved = (await adminDisputes(world, admin, { status: 'refunded' })).items.find(
      (d) => d.id === opened.id,
    );
    assert.equal(resolved?.refundable, 0);
    await assertLedgerOk(world);
  });

  it('a decline moves no money and tells the person why', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    const before = await balance(world, user);
    const opened = ok(
      await report(world, user, purchase.reference, { reason: 'wrong_recipient', message: 'Wrong number' }),
    );
    const declined = ok(
      await resolve(world, admin, opened.id, 'decline', { reason: 'Delivered to the number you typed' }),
    );
    assert.equal(declined.status, 'declined');
    assert.equal(declined.refunded, undefined);
    assert.equal(declined.resolution, 'Delivered to the number you typed');
    assert.equal(await balance(world, user), before);
    const told = (await inbox(user)).filter((n) => n.kind === 'dispute_resolved');
    assert.equal(told.length, 1);
    assert.equal(told[0]!.data.decision, 'decline');
    assert.match(told[0]!.body, /Delivered to the number you typed/);
    const events = (await publishedEvents(world, 'disputes.resolved')).filter(
      (e) => e.userId === user.userId,
    );
    assert.deepEqual(
      events.map((e) => [e.decision, e.refundedKobo]),
      [['decline', '0']],
    );

    // Once resolved, the same purchase can be reported again (one open dispute at a time).
    const again = ok(
      await report(world, user, purchase.reference, { reason: 'other', message: 'Still nothing' }),
    );
    assert.equal(again.status, 'open');
    assert.notEqual(again.id, opened.id);
  });

  it('refusals: unknown and other people’s references are 404, a second open dispute is 409, nothing is recorded', async () => {
    const user = await buyer(world, 2_000);
    const stranger = await buyer(world, 0);
    const purchase = await airtime(world, user, '0');
    expectError(await report(world, user, 'vtu:nothing-like-it'), 404, 'NOT_FOUND');
    expectError(await report(world, stranger, purchase.reference), 404, 'NOT_FOUND');
    const [debit] = await walletHistory(world, user);
    expectError(await report(world, stranger, debit!.reference), 404, 'NOT_FOUND');
    assert.equal((await myDisputes(world, stranger)).total, 0);

    ok(await report(world, user, purchase.reference));
    expectError(await report(world, user, purchase.reference, { reason: 'charged_twice' }), 409, 'CONFLICT');
    // The purchase's wallet movement names the same purchase: still the one open dispute.
    expectError(await report(world, user, debit!.reference), 409, 'CONFLICT');
    assert.equal((await myDisputes(world, user)).total, 1);
  });

  it('bad input is 400 VALIDATION_ERROR and records nothing; operators only for the admin operations', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    expectValidationAt(await report(world, user, purchase.reference, { reason: 'bored' }), 'data.reason');
    expectValidationAt(await report(world, user, purchase.reference, { message: '  ' }), 'data.message');
    expectValidationAt(
      await report(world, user, purchase.reference, { message: 'x'.repeat(1001) }),
      'data.message',
    );
    expectError(await report(world, user, purchase.reference, { extra: 1 }), 400, 'VALIDATION_ERROR');
    expectValidationAt(await report(world, user, ''), 'data.reference');
    assert.equal((await myDisputes(world, user)).total, 0);

    const opened = ok(await report(world, user, purchase.reference));
    expectError(await resolve(world, user, opened.id, 'refund'), 403, 'FORBIDDEN');
    expectError(await get(world, 'adminListDisputes', {}, { token: user.accessToken }), 403, 'FORBIDDEN');
    expectValidationAt(await resolve(world, admin, opened.id, 'decline', { amount: 10 }), 'data.amount');
    expectValidationAt(await resolve(world, admin, opened.id, 'refund', { amount: 1.234 }), 'data.amount');
    expectValidationAt(await resolve(world, admin, opened.id, 'refund', { amount: -5 }), 'data.amount');
    expectValidationAt(await resolve(world, admin, opened.id, 'refund', { reason: '' }), 'data.reason');
    expectValidationAt(await resolve(world, admin, 'not-an-id', 'refund'), 'data.id');
    expectError(
      await resolve(world, admin, '01900000-0000-7000-8000-000000000000', 'refund'),
      404,
      'NOT_FOUND',
    );
    expectError(
      await get(world, 'listMyDisputes', { status: 'maybe' }, { token: user.accessToken }),
      400,
      'VALIDATION_ERROR',
    );
    const [still] = (await myDisputes(world, user)).items;
    assert.equal(still?.status, 'open', 'no refused resolution touched it');
  });

  it('a refund is bounded by what was charged less what went back, across disputes of one purchase', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    const start = await balance(world, user);
    const first = ok(await report(world, user, purchase.reference));
    const above = expectError(
      await resolve(world, admin, first.id, 'refund', { amount: purchase.amount + 0.01 }),
      422,
      'ABOVE_MAXIMUM',
    );
    assert.equal(above.details?.limit, purchase.amount);
    assert.equal(await balance(world, user), start, 'a refused refund moves nothing');

    ok(await resolve(world, admin, first.id, 'refund', { amount: 100 }));
    const second = ok(await report(world, user, purchase.reference, { reason: 'charged_twice' }));
    const left = purchase.amount - 100;
    const over = expectError(
      await resolve(world, admin, second.id, 'refund', { amount: left + 1 }),
      422,
      'ABOVE_MAXIMUM',
    );
    assert.equal(over.details?.limit, left);
    const rest = ok(await resolve(world, admin, second.id, 'refund'));
    assert.equal(rest.refunded, left);
    assert.equal(await balance(world, user), start + purchase.amount);

    const third = ok(await report(world, user, purchase.reference, { reason: 'other' }));
    expectError(await resolve(world, admin, third.id, 'refund'), 409, 'CONFLICT');
    expectError(await resolve(world, admin, third.id, 'refund', { amount: 1 }), 422, 'ABOVE_MAXIMUM');
    assert.equal(await balance(world, user), start + purchase.amount);
    await assertLedgerOk(world);
  });

  it('a failed purchase, already refunded by its failure, has nothing left to refund', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '1');
    assert.equal(purchase.status, 'failed');
    const start = await balance(world, user);
    assert.equal(start, 2_000, 'the failure refunded it');
    const opened = ok(await report(world, user, purchase.reference));
    const queued = (await adminDisputes(world, admin)).items.find((d) => d.id === opened.id);
    assert.equal(queued?.refundable, 0);
    assert.ok(queued?.transaction.exchange?.failureReason);
    expectError(await resolve(world, admin, opened.id, 'refund'), 409, 'CONFLICT');
    const above = expectError(
      await resolve(world, admin, opened.id, 'refund', { amount: 1 }),
      422,
      'ABOVE_MAXIMUM',
    );
    assert.equal(above.details?.limit, 0);
    assert.equal(await balance(world, user), start);
    ok(await resolve(world, admin, opened.id, 'decline', { reason: 'It failed and was refunded at once' }));
  });

  it('a purchase still processing cannot be refunded until its outcome is known', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '2');
    assert.equal(purchase.status, 'processing');
    const opened = ok(await report(world, user, purchase.reference));
    const queued = (await adminDisputes(world, admin)).items.find((d) => d.id === opened.id);
    assert.equal(queued?.refundable, null);
    assert.equal(queued?.transaction.purchase?.status, 'processing');
    const start = await balance(world, user);
    expectError(await resolve(world, admin, opened.id, 'refund'), 409, 'CONFLICT');
    assert.equal(await balance(world, user), start);
    assert.equal((await myDisputes(world, user)).items[0]?.status, 'open');
  });

  it('a wallet movement that is no purchase: a lock charged nothing, its early break the penalty, a credit nothing', async () => {
    const user = await buyer(world, 5_000);
    const lock = ok(
      await post<{ id: string }>(
        world,
        'createSavingsLock',
        { amount: 1_000, days: 30 },
        { token: user.accessToken },
      ),
    );
    const [locked] = await walletHistory(world, user, { kind: 'savings_lock' });
    assert.ok(locked !== undefined);
    const [credit] = await walletHistory(world, user, { kind: 'adjustment' });
    assert.ok(credit !== undefined, 'the test funding is a credit of the wallet');

    // The lock moved ₦1,000 into the person's own savings: refunding it would pay them twice.
    const onLock = ok(
      await report(world, user, locked.reference, { reason: 'other', message: 'I did not lock this' }),
    );
    assert.equal(onLock.reference, locked.reference);
    const queued = (await adminDisputes(world, admin)).items.find((d) => d.id === onLock.id);
    assert.equal(queued?.transaction.kind, 'wallet');
    assert.equal(queued?.transaction.charged, 0);
    assert.equal(queued?.refundable, 0);
    assert.equal(queued?.transaction.purchase, undefined);
    expectError(await resolve(world, admin, onLock.id, 'refund'), 409, 'CONFLICT');
    expectError(await resolve(world, admin, onLock.id, 'refund', { amount: 1 }), 422, 'ABOVE_MAXIMUM');

    // Broken early, the lock gives back ₦950: the break took the ₦50 penalty, and only that is left
    // to refund, on the lock's reference as on the break's.
    ok(await post(world, 'breakSavingsLock', { lockId: lock.id }, { token: user.accessToken }));
    assert.equal((await adminDisputes(world, admin)).items.find((d) => d.id === onLock.id)?.refundable, 0);
    ok(await resolve(world, admin, onLock.id, 'decline'));
    const [released] = await walletHistory(world, user, { kind: 'savings_release' });
    assert.equal(released?.amount, 950);
    const onBreak = ok(
      await report(world, user, released.reference, { reason: 'other', message: 'I broke it by mistake' }),
    );
    const breakQueued = (await adminDisputes(world, admin)).items.find((d) => d.id === onBreak.id);
    assert.equal(breakQueued?.transaction.charged, 50);
    assert.equal(breakQueued?.refundable, 50);
    expectError(await resolve(world, admin, onBreak.id, 'refund', { amount: 50.01 }), 422, 'ABOVE_MAXIMUM');
    const before = await balance(world, user);
    assert.equal(ok(await resolve(world, admin, onBreak.id, 'refund')).refunded, 50);
    assert.equal(await balance(world, user), before + 50);

    const onCredit = ok(
      await report(world, user, credit.reference, { reason: 'other', message: 'Where is the rest?' }),
    );
    expectError(await resolve(world, admin, onCredit.id, 'refund'), 409, 'CONFLICT');
    await assertLedgerOk(world);
  });

  it('an open dispute reported before the fix is measured again by the migration: a lock charged nothing', async () => {
    const user = await buyer(world, 5_000);
    ok(await post(world, 'createSavingsLock', { amount: 1_000, days: 30 }, { token: user.accessToken }));
    const [locked] = await walletHistory(world, user, { kind: 'savings_lock' });
    assert.ok(locked !== undefined);
    const onLock = ok(await report(world, user, locked.reference, { reason: 'other', message: 'Not mine' }));
    // As the wallet-only measure recorded it before 2026-12-05T0800.
    await world.ctx.db
      .updateTable('disputes')
      .set({ charged: 100_000n })
      .where('id', '=', onLock.id)
      .execute();
    assert.equal(
      (await adminDisputes(world, admin)).items.find((d) => d.id === onLock.id)?.refundable,
      1_000,
    );

    await ownerChargeMigration.up(world.ctx.db as Kysely<unknown>);
    assert.equal((await adminDisputes(world, admin)).items.find((d) => d.id === onLock.id)?.refundable, 0);
    expectError(await resolve(world, admin, onLock.id, 'refund'), 409, 'CONFLICT');
  });

  it('lists page newest first with the contract’s paging', async () => {
    const user = await buyer(world, 5_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const purchase = await airtime(world, user, '0', 100);
      ids.push(ok(await report(world, user, purchase.reference)).id);
    }
    const page = await myDisputes(world, user, { limit: 2, offset: 1 });
    assert.deepEqual([page.limit, page.offset, page.total], [2, 1, 3]);
    assert.deepEqual(
      page.items.map((d) => d.id),
      [ids[1], ids[0]],
    );
    expectError(
      await get(world, 'listMyDisputes', { limit: 101 }, { token: user.accessToken }),
      400,
      'VALIDATION_ERROR',
    );
    const declinedOnly = await myDisputes(world, user, { status: 'declined' });
    assert.equal(declinedOnly.total, 0);
  });
});

describe('the dispute window', () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { DISPUTE_WINDOW_DAYS: '3' } });
  });
  after(() => world.close());

  it('a movement older than DISPUTE_WINDOW_DAYS is 422 ABOVE_MAXIMUM in days; within it, reported', async () => {
    let user: Buyer = await buyer(world, 1_000);
    const older = await airtime(world, user, '0', 100);
    await advanceClock(world, 2 * 86_400);
    user = { ...user, ...(await signInAgain(world, user.phone)) };
    const newer = await airtime(world, user, '0', 100);
    await advanceClock(world, 86_400 + 60);
    user = { ...user, ...(await signInAgain(world, user.phone)) };
    const late = expectError(await report(world, user, older.reference), 422, 'ABOVE_MAXIMUM');
    assert.deepEqual(late.details, { limit: 3, unit: 'days' });
    assert.equal(ok(await report(world, user, newer.reference)).status, 'open');
    assert.equal((await myDisputes(world, user)).total, 1);
  });

  it('defaults to 30 days, and refuses a window that is no whole number of days', () => {
    assert.equal(loadConfig({}).disputes.windowDays, 30);
    assert.throws(() => loadConfig({ DISPUTE_WINDOW_DAYS: '2.5' }), /DISPUTE_WINDOW_DAYS/);
    assert.throws(() => loadConfig({ DISPUTE_WINDOW_DAYS: '0' }), /DISPUTE_WINDOW_DAYS/);
  });
});
