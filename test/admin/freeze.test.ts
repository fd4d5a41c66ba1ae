import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { nairaToKobo } from '../../src/money.ts';
import { airtimeLines, order as bulkOrder, ordersOnRecord } from '../bulk-orders/support.ts';
import { walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  type ApiResponse,
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import {
  notificationsOf,
  purchasesOf,
  refreshed,
  scheduleOf,
  sendsEnded,
  skippedDailyRun,
} from '../schedules/support.ts';
import { member, transferCall } from '../transfers/support.ts';
import { advanceClock, buyCall, buyer, current, mtn, recordedPurchases } from '../vtu/purchase-support.ts';

// Freezing an account (API.md section 17.4, decision 0040) over HTTP: the operator's operations and
// their errors, `frozen` on getMe, the person told (never the reason), every way money leaves a
// wallet at the person's request refused with 403 ACCOUNT_FROZEN and charged nothing (a purchase, a
// social order, a bulk order, a scheduled run, a transfer), credits still landing (a transfer in, a
// refund), and everything back once unfrozen. The race (a freeze amid 50 purchases, across two
// services) proves something only on PostgreSQL.

type FreezeState = { userId: string; frozen: boolean; frozenAt: string | null; reason: string | null };
type Me = { id: string; frozen: boolean };

const e164 = (phone: string) => `+234${phone.slice(1)}`;
const DAY = 24 * 60 * 60;

/** No host resolves: the sandbox takes a social link whose name does not resolve (as social-orders.test.ts). */
const nothingResolves = async (host: string): Promise<string[]> => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

describe(`freezing an account (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhone = uniquePhone();
  let world: World;
  let admin: SignedIn;
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: e164(adminPhone) }, resolveHost: nothingResolves });
    admin = await signIn(world, adminPhone);
  });
  after(() => world?.close());

  const freeze = (userId: string, reason = 'suspected card fraud, case 4411', as = admin) =>
    post<FreezeState>(world, 'adminFreezeUser', { userId, reason }, { token: as.accessToken });
  const unfreeze = (userId: string, reason = 'cleared by compliance', as = admin) =>
    post<FreezeState>(world, 'adminUnfreezeUser', { userId, reason }, { token: as.accessToken });
  const me = async (user: SignedIn) => ok(await get<Me>(world, 'getMe', {}, { token: user.accessToken }));
  const airtime = (user: SignedIn, last = '5') =>
    buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn(last), amount: 100 });
  const refusedFrozen = (answer: ApiResponse, what: string) => {
    const error = failure(answer);
    assert.deepEqual([error.status, error.code], [403, 'ACCOUNT_FROZEN'], what);
  };

  it('is an operator’s: frozen and unfrozen once each, told apart from nobody, shown on getMe', async () => {
    const user = await buyer(world, 0);
    assert.equal((await me(user)).frozen, false);

    const stranger = failure(await freeze(user.userId, 'no', user));
    assert.deepEqual([stranger.status, stranger.code], [403, 'FORBIDDEN'], 'a person cannot freeze');
    const nobody = failure(await freeze(randomUUID()));
    assert.deepEqual([nobody.status, nobody.code], [404, 'NOT_FOUND']);
    const blank = failure(await freeze(user.userId, '  '));
    assert.deepEqual([blank.status, blank.code], [400, 'VALIDATION_ERROR'], 'a reason is required');
    const notFrozen = failure(await unfreeze(user.userId));
    assert.deepEqual(
      [notFrozen.status, notFrozen.code],
      [409, 'CONFLICT'],
      'unfreezing an account not frozen',
    );

    const asked = world.ctx.clock.now().getTime();
    const frozen = ok(await freeze(user.userId));
    assert.deepEqual(
      [frozen.userId, frozen.frozen, frozen.reason],
      [user.userId, true, 'suspected card fraud, case 4411'],
    );
    const frozenAt = Date.parse(frozen.frozenAt!);
    assert.ok(frozenAt >= asked && frozenAt <= world.ctx.clock.now().getTime(), 'frozen as asked');
    assert.equal((await me(user)).frozen, true, 'getMe carries frozen');
    const twice = failure(await freeze(user.userId, 'again'));
    assert.deepEqual([twice.status, twice.code], [409, 'CONFLICT'], 'freezing a frozen account');
    assert.deepEqual(twice.details, { frozenAt: frozen.frozenAt });
    const row = await world.ctx.db
      .selectFrom('users')
      .select(['frozen_reason', 'frozen_by'])
      .where('id', '=', user.userId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { frozen_reason: 'suspected card fraud, case 4411', frozen_by: admin.userId });

    // A frozen person still signs in and reads their things.
    ok(await get(world, 'getWallet', {}, { token: user.accessToken }));
    ok(await get(world, 'listMyVtuTransactions', { limit: 5 }, { token: user.accessToken }));

    const thawed = ok(await unfreeze(user.userId));
    assert.deepEqual(thawed, { userId: user.userId, frozen: false, frozenAt: null, reason: null });
    assert.equal((await me(user)).frozen, false);
    const missing = failure(await unfreeze(randomUUID()));
    assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND']);

    await runDomainEvents(world);
    const inbox = await notificationsOf(world, user);
    const told = inbox.filter((n) => n.kind === 'account_frozen' || n.kind === 'account_unfrozen');
    assert.deepEqual(told.map((n) => n.kind).sort(), ['account_frozen', 'account_unfrozen']);
    for (const n of told)
      assert.doesNotMatch(`${n.title} ${n.body}`, /fraud|4411|compliance/, 'never the reason');
  });

  it('refuses every payment out with 403 ACCOUNT_FROZEN, charging and recording nothing', async () => {
    const user = await member(world, 2, 20_000);
    const recipient = await member(world, 1);
    ok(await freeze(user.userId));
    const before = await walletKobo(world, user.userId);

    refusedFrozen(await airtime(user), 'buyAirtime');
    const social = await buyCall(world, user, 'buySocialService', {
      serviceId: '1002',
      link: 'https://instagram.com/p/billrail',
      quantity: 100,
      amount: 32.05,
    });
    refusedFrozen(social, 'buySocialService');
    const lines = airtimeLines(3).map((line) => ({ ...line, phone: mtn('5') }));
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    refusedFrozen(await bulkOrder(world, user, { lines, total }), 'createBulkOrder');
    refusedFrozen(await transferCall(world, user, recipient, 500), 'transferToUser');

    assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
    assert.equal(await recordedPurchases(world, user.userId), 0, 'no purchase recorded');
    assert.equal(await ordersOnRecord(world, user.userId), 0, 'no bulk order recorded');
    const sent = await world.ctx.db
      .selectFrom('wallet_transfers')
      .select('id')
      .where('sender_id', '=', user.userId)
      .execute();
    assert.equal(sent.length, 0, 'no transfer recorded');

    // Once unfrozen, each goes through again.
    ok(await unfreeze(user.userId));
    ok(await airtime(user));
    ok(await transferCall(world, user, recipient, 500));
    ok(await bulkOrder(world, user, { lines, total }));
    await sendsEnded(world, user);
  });

  it('still lets credits land: a transfer in, and the refund of a purchase accepted before the freeze', async () => {
    const user = await member(world, 2, 1_000);
    const sender = await member(world, 2, 1_000);
    // Pending, then failed by the requery a minute later (API.md section 8: last digit 3).
    const pending = ok(await airtime(user, '3'));
    await world.ctx.modules.vtu.api.sendEnded(pending.id);
    ok(await freeze(user.userId));
    const frozenAt = await walletKobo(world, user.userId);

    ok(await transferCall(world, sender, user, 250));
    assert.equal(await walletKobo(world, user.userId), frozenAt + nairaToKobo(250), 'a transfer in lands');
    await advanceClock(world, 61);
    assert.equal((await current(world, user, pending.id)).status, 'failed');
    assert.equal(
      await walletKobo(world, user.userId),
      frozenAt + nairaToKobo(250) + nairaToKobo(100),
      'the refund lands',
    );
    ok(await unfreeze(user.userId));
  });

  it('skips a scheduled run with the reason, without counting it, and runs the next once unfrozen', async () => {
    const person = await buyer(world, 5_000);
    const skipped = await skippedDailyRun(world, person, async () => ok(await freeze(person.userId)));
    assert.match(skipped.told.body, /frozen/);
    assert.equal(skipped.told.data.reason, 'your account is frozen; contact support');

    ok(await unfreeze(person.userId));
    await advanceClock(world, DAY);
    const user = await refreshed(world, skipped.user);
    await sendsEnded(world, user);
    assert.equal((await scheduleOf(world, user, skipped.schedule.id)).runs, 1, 'the next run is made');
    assert.equal((await purchasesOf(world, user)).length, 1);
  });

  describe('racing the freeze (on PostgreSQL, across two services on one database)', {
    skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite runs one transaction at a time',
  }, () => {
    let twin: World;
    let operator: SignedIn;
    before(async () => {
      twin = await createWorld({
        env: { ADMIN_PHONES: e164(adminPhone) },
        resolveHost: nothingResolves,
        sameDatabaseAs: world,
      });
      await noteCommits(world);
      // The sandbox clock moved a day in a test before: the operator signs in again.
      operator = await signInAgain(world, adminPhone);
    });
    after(() => twin?.close());

    /**
     * Sends half of the payments, then the freeze (through the twin) once one of them is answered,
     * with the other half: payments are in every stage of their acceptance when the freeze comes.
     * Answers every payment's answer, the freeze answered.
     */
    async function race<T>(
      userId: string,
      pay: (i: number) => Promise<ApiResponse<T>>,
    ): Promise<ApiResponse<T>[]> {
      await sql`truncate freeze_race_commits`.execute(world.ctx.db);
      const first = Array.from({ length: 25 }, (_, i) => pay(i));
      await Promise.race(first);
      const frozen = post<FreezeState>(
        twin,
        'adminFreezeUser',
        { userId, reason: 'race' },
        { token: operator.accessToken },
      );
      const answers = await Promise.all([...first, ...Array.from({ length: 25 }, (_, i) => pay(25 + i))]);
      ok(await frozen);
      for (const refused of answers.filter((a) => a.status !== 200)) {
        const error = failure(refused);
        assert.deepEqual([error.status, error.code], [403, 'ACCOUNT_FROZEN']);
      }
      const { rows: commits } = await sql<{ what: string }>`
        select what from freeze_race_commits order by seq`.execute(world.ctx.db);
      const freezeAt = commits.findIndex((c) => c.what === 'freeze');
      assert.ok(freezeAt >= 0, 'the freeze committed');
      assert.deepEqual(
        commits.slice(freezeAt + 1).filter((c) => c.what !== 'freeze'),
        [],
        'no payment accepted after the freeze committed',
      );
      assert.equal(
        commits.filter((c) => c.what !== 'freeze').length,
        answers.filter((a) => a.status === 200).length,
      );
      return answers;
    }

    it('accepts no purchase after the freeze commits, among 50 racing', async () => {
      const user = await buyer(world, 20_000);
      const answers = await race(user.userId, (i) =>
        buyCall(i % 2 === 0 ? world : twin, user, 'buyAirtime', {
          network: 'mtn',
          phone: mtn('5'),
          amount: 100,
        }),
      );
      const accepted = answers.filter((a) => a.status === 200).map((a) => ok(a));
      assert.equal(await recordedPurchases(world, user.userId), accepted.length);
      const charged = accepted.reduce((sum, a) => sum + nairaToKobo(a.amount), 0n);
      assert.equal(await walletKobo(world, user.userId), nairaToKobo(20_000) - charged, 'only those charged');
      await world.ctx.modules.vtu.api.drained();
      await twin.ctx.modules.vtu.api.drained();
    });

    it('accepts no transfer after the freeze commits, among 50 racing', async () => {
      const sender = await member(world, 2, 20_000);
      const recipient = await member(world, 1);
      const answers = await race(sender.userId, (i) =>
        transferCall(i % 2 === 0 ? world : twin, sender, recipient, 100),
      );
      const sent = answers.filter((a) => a.status === 200).length;
      assert.equal(
        await walletKobo(world, sender.userId),
        nairaToKobo(20_000 - 100 * sent),
        'only those sent',
      );
      assert.equal(await walletKobo(world, recipient.userId), nairaToKobo(100 * sent));
    });
  });
});

/**
 * Notes the order in which transactions reach their commit, by deferred triggers (they run as the
 * transaction commits, still holding its locks): a purchase or a transfer recorded, a freeze made.
 */
async function noteCommits(world: World): Promise<void> {
  const statements = [
    'create table freeze_race_commits (seq bigserial primary key, what text not null)',
    `create function freeze_race_note() returns trigger language plpgsql as $$
     begin
       insert into freeze_race_commits (what) values (tg_argv[0]);
       return null;
     end $$`,
    `create constraint trigger freeze_race_purchase after insert on vtu_transactions
     deferrable initially deferred for each row execute function freeze_race_note('purchase')`,
    `create constraint trigger freeze_race_transfer after insert on wallet_transfers
     deferrable initially deferred for each row execute function freeze_race_note('transfer')`,
    `create constraint trigger freeze_race_freeze after update of frozen_at on users
     deferrable initially deferred for each row when (old.frozen_at is null and new.frozen_at is not null)
     execute function freeze_race_note('freeze')`,
  ];
  for (const text of statements) await sql.raw(text).execute(world.ctx.db);
}
