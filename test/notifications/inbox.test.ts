import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { alertEmailJob, raiseAlert } from '../../src/alerts/alerts.ts';
import { dispatchEventJob } from '../../src/events/domain-events.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectError, expectValidationAt, submitTier1, userAtTier } from '../kyc/kyc-support.ts';
import { lock } from '../savings/support.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The in-app inbox: every platform event reaches its user once, newest first, with the unread count.

type Notification = {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  readAt: string | null;
  createdAt: string;
};
type Inbox = { items: Notification[]; limit: number; offset: number; total: number; unread: number };

describe(`inbox (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  const inbox = async (user: SignedIn, query: Record<string, unknown> = {}) =>
    ok(await get<Inbox>(world, 'listNotifications', query, { token: user.accessToken }));

  it('tells the user of purchases, refunds and savings, newest first, once per event even when it runs twice', async () => {
    const user = await buyer(world, 5_000);
    await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
    await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 200 });
    const saved = await lock(world, user, 1_000);
    const ran = await runDomainEvents(world);
    // The same events again, twice and at once: a job that runs again must not repeat them.
    await Promise.all([
      dispatchEventJob(world.ctx.events, { events: ran }),
      dispatchEventJob(world.ctx.events, { events: ran }),
    ]);
    const mine = await inbox(user);
    assert.deepEqual(
      mine.items.map((n) => n.kind),
      ['lock_created', 'purchase_failed', 'purchase_succeeded', 'kyc_approved'],
    );
    assert.deepEqual([mine.total, mine.unread, mine.limit, mine.offset], [4, 4, 20, 0]);
    const [locked, failed, succeeded] = mine.items;
    assert.match(locked!.body, /₦1,000\.00 is locked for 30 days/);
    assert.equal(locked!.data.lockId, saved.id);
    assert.match(failed!.title, /failed: refunded/);
    assert.match(failed!.body, /back in your wallet \(reference \d{12}/);
    assert.match(succeeded!.body, /succeeded \(reference \d{12}/);
    for (const n of mine.items) {
      assert.equal(n.readAt, null);
      assert.doesNotMatch(JSON.stringify(n), /2580|pin/i, 'never a secret');
    }
    const page = await inbox(user, { limit: 2, offset: 1 });
    assert.deepEqual(
      page.items.map((n) => n.kind),
      ['purchase_failed', 'purchase_succeeded'],
    );
  });

  it('tells of KYC decisions, check-ins and referral bonuses', async () => {
    const referrer = await signIn(world);
    const me = ok(await get<{ referralCode: string }>(world, 'getMe', {}, { token: referrer.accessToken }));
    const invitee = await signIn(world, uniquePhone(), { referralCode: me.referralCode });
    ok(
      await post(
        world,
        'updateProfile',
        { firstName: 'Ngozi', lastName: 'Obi' },
        { token: invitee.accessToken },
      ),
    );
    assert.equal(ok(await submitTier1(world, invitee, 'sandbox-fail')).status, 'rejected');
    ok(await post(world, 'claimCheckin', {}, { token: invitee.accessToken }));
    await runDomainEvents(world);
    await userAtTier(world, 1, invitee);
    // The approval's event, then the referral it qualifies: two rounds of jobs.
    await runDomainEvents(world);
    await runDomainEvents(world);
    assert.deepEqual(
      (await inbox(invitee)).items.map((n) => n.kind),
      ['kyc_approved', 'checkin_claimed', 'kyc_rejected'],
    );
    const told = (await inbox(referrer)).items;
    assert.deepEqual(
      told.map((n) => [n.kind, n.body]),
      [['referral_qualified', 'Someone you invited was verified: ₦200.00 was added to your locked bonus.']],
    );
  });

  it('marks one read (another user’s or an unknown id is 404) and all read', async () => {
    const user = await buyer(world, 3_000);
    await lock(world, user, 100);
    await lock(world, user, 200);
    await runDomainEvents(world);
    const before = await inbox(user);
    assert.equal(before.unread, 3);
    const first = before.items[0]!;
    const read = ok(
      await post<Notification>(world, 'markNotificationRead', { id: first.id }, { token: user.accessToken }),
    );
    assert.ok(read.readAt !== null);
    const again = ok(
      await post<Notification>(world, 'markNotificationRead', { id: first.id }, { token: user.accessToken }),
    );
    assert.equal(again.readAt, read.readAt, 'the first reading stays');
    assert.equal((await inbox(user)).unread, 2);
    const other = await signIn(world);
    expectError(
      await post(world, 'markNotificationRead', { id: first.id }, { token: other.accessToken }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await post(world, 'markNotificationRead', { id: randomUUID() }, { token: user.accessToken }),
      404,
      'NOT_FOUND',
    );
    expectValidationAt(
      await post(world, 'markNotificationRead', { id: 'x' }, { token: user.accessToken }),
      'data.id',
    );
    assert.deepEqual(ok(await post(world, 'markAllNotificationsRead', {}, { token: user.accessToken })), {
      marked: 2,
    });
    const after = await inbox(user);
    assert.equal(after.unread, 0);
    assert.ok(after.items.every((n) => n.readAt !== null));
    assert.deepEqual(ok(await post(world, 'markAllNotificationsRead', {}, { token: user.accessToken })), {
      marked: 0,
    });
  });

  it("puts operations alerts in administrators' inboxes, once per alert, and nobody else's", async () => {
    const admin = await signIn(world, adminPhone);
    const user = await signIn(world);
    const now = world.ctx.clock.now();
    await raiseAlert(
      world.ctx.db,
      { kind: 'vtu_purchase_stuck', message: 'purchase X still processing', details: { reference: 'X' } },
      now,
      world.ctx.jobs,
    );
    const [alert] = await world.ctx.db
      .selectFrom('ops_alerts')
      .select('id')
      .where('message', '=', 'purchase X still processing')
      .execute();
    await world.ctx.jobs.runNow(alertEmailJob, { alertId: alert!.id });
    await world.ctx.jobs.runNow(alertEmailJob, { alertId: alert!.id });
    const told = (await inbox(admin)).items.filter((n) => n.kind === 'ops_alert');
    assert.deepEqual(
      told.map((n) => [n.title, n.body, n.data.alertId]),
      [['Operations alert: vtu_purchase_stuck', 'purchase X still processing', alert!.id]],
    );
    assert.equal((await inbox(user)).items.filter((n) => n.kind === 'ops_alert').length, 0);
  });
});
