import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { advance, codeAt, enrolAndConfirm, wrongCode } from './totp-support.ts';

// The audit trail of the admin operations (API.md section 17.4, decision 0039) over HTTP: one row for
// every admin operation answered, allowed or refused (the role, the second factor, validation, the
// operation's own rules), GETs included, with the input's credentials redacted; an allowed POST's row
// committed with what it did, a refused one's on its own while its effects are absent; the rows
// beyond the reach of UPDATE, DELETE and TRUNCATE; and adminListAuditLog's filters and pages.

type AuditEntry = {
  id: string;
  at: string;
  adminId: string;
  operation: string;
  input: unknown;
  outcome: string;
  ip: string;
};
type AuditPage = { items: AuditEntry[]; limit: number; offset: number; total: number };

const e164 = (phone: string) => `+234${phone.slice(1)}`;

describe(`the audit log (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhones = [uniquePhone(), uniquePhone(), uniquePhone()];
  let world: World;
  let auditor: SignedIn;
  let proposer: SignedIn;
  let unenrolled: SignedIn;
  let user: SignedIn;
  let auditorSecret: string;
  before(async () => {
    world = await createWorld({
      env: { ADMIN_PHONES: adminPhones.map(e164).join(','), ADMIN_SECOND_FACTOR: 'totp' },
    });
    auditor = await signIn(world, adminPhones[0]);
    proposer = await signIn(world, adminPhones[1]);
    unenrolled = await signIn(world, adminPhones[2]);
    user = await signIn(world);
    auditorSecret = await enrolAndConfirm(world, auditor);
    await enrolAndConfirm(world, proposer);
  });
  after(async () => {
    await world.close();
  });

  const list = (query: Record<string, unknown> = {}) =>
    get<AuditPage>(world, 'adminListAuditLog', { limit: 100, ...query }, { token: auditor.accessToken });
  /** The rows of one caller and operation, newest first. */
  const rowsOf = async (adminId: string, operation: string) => ok(await list({ adminId, operation })).items;

  it('records refusals: the role, the second factor, validation, each with its code and the caller', async () => {
    assert.equal(
      failure(await get(world, 'adminListAlerts', {}, { token: user.accessToken })).code,
      'FORBIDDEN',
    );
    assert.equal(
      failure(
        await post(
          world,
          'adminSetMarkup',
          { service: 'airtime', flat: 1 },
          { token: unenrolled.accessToken },
        ),
      ).code,
      'SECOND_FACTOR_REQUIRED',
    );
    assert.equal(
      failure(
        await post(
          world,
          'adminSetMarkup',
          { service: 'no-such-service', flat: 1 },
          { token: auditor.accessToken },
        ),
      ).code,
      'VALIDATION_ERROR',
    );
    const [forbidden] = await rowsOf(user.userId, 'adminListAlerts');
    assert.equal(forbidden?.outcome, 'FORBIDDEN');
    assert.equal(forbidden?.ip, '127.0.0.1');
    const [second] = await rowsOf(unenrolled.userId, 'adminSetMarkup');
    assert.equal(second?.outcome, 'SECOND_FACTOR_REQUIRED');
    assert.equal(second?.input, null, 'refused before its body was read');
    const [invalid] = await rowsOf(auditor.userId, 'adminSetMarkup');
    assert.equal(invalid?.outcome, 'VALIDATION_ERROR');
    assert.deepEqual(invalid?.input, { service: 'no-such-service', flat: 1 });
  });

  it('records allowed operations, GETs and replays, with the input as sent', async () => {
    ok(await get(world, 'adminListAlerts', { limit: 7 }, { token: auditor.accessToken }));
    const [read] = await rowsOf(auditor.userId, 'adminListAlerts');
    assert.equal(read?.outcome, 'ok');
    assert.deepEqual(read?.input, { limit: 7, offset: 0 }, 'the query as validated');

    const idempotencyKey = randomUUID();
    const markup = { service: 'airtime', percent: 2.5 };
    ok(await post(world, 'adminSetMarkup', markup, { token: auditor.accessToken, idempotencyKey }));
    const replayed = await post(world, 'adminSetMarkup', markup, {
      token: auditor.accessToken,
      idempotencyKey,
    });
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    const [again, done] = await rowsOf(auditor.userId, 'adminSetMarkup');
    assert.equal(again?.outcome, 'replayed');
    assert.equal(done?.outcome, 'ok');
    assert.deepEqual(done?.input, markup);
    assert.ok(Date.parse(done!.at) <= Date.parse(again!.at));
  });

  it('redacts codes (and any credential) from the input, in the answer and in the table', async () => {
    advance(world, 30);
    const right = codeAt(world, auditorSecret);
    const wrong = wrongCode(right);
    assert.equal(
      failure(await post(world, 'adminVerifyTotp', { code: wrong }, { token: auditor.accessToken })).code,
      'FORBIDDEN',
    );
    ok(await post(world, 'adminVerifyTotp', { code: right }, { token: auditor.accessToken }));
    const [allowed, refused] = await rowsOf(auditor.userId, 'adminVerifyTotp');
    assert.equal(allowed?.outcome, 'ok');
    assert.deepEqual(allowed?.input, { code: '[redacted]' });
    assert.equal(refused?.outcome, 'FORBIDDEN');
    assert.deepEqual(refused?.input, { code: '[redacted]' });
    // Credentials at any depth, under any spelling of their name; other fields kept.
    failure(
      await post(
        world,
        'adminSetMarkup',
        { service: 'data', pin: '1234', nested: { otpCode: '654321', api_key: 'k', shipping: 'kept' } },
        { token: auditor.accessToken },
      ),
    );
    const [invalid] = await rowsOf(auditor.userId, 'adminSetMarkup');
    assert.deepEqual(invalid?.input, {
      service: 'data',
      pin: '[redacted]',
      nested: { otpCode: '[redacted]', api_key: '[redacted]', shipping: 'kept' },
    });
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from audit_log
      where input::text like ${`%${right}%`} or input::text like ${`%${wrong}%`}
        or input::text like '%654321%' or input::text like '%1234%'`.execute(world.ctx.db);
    assert.equal(rows[0]?.n, '0', 'no code is stored anywhere in the trail');
  });

  it("commits an allowed POST's row with what it did; a refused one's effects are absent, its row present", async () => {
    const idempotencyKey = randomUUID();
    const proposed = ok(
      await post<{ id: string; status: string }>(
        world,
        'adminProposeAdjustment',
        { userId: user.userId, direction: 'debit', amount: 5_000, reason: 'Reverse a duplicate credit' },
        { token: proposer.accessToken, idempotencyKey },
      ),
    );
    const [proposal] = await rowsOf(proposer.userId, 'adminProposeAdjustment');
    assert.equal(proposal?.outcome, 'ok');
    // One transaction wrote the proposal, its Idempotency-Key answer and its audit row: the same xmin.
    const { rows: writers } = await sql<{ xmin: string }>`
      select xmin::text from adjustments where id = ${proposed.id}
      union all select xmin::text from idempotency_keys where key = ${idempotencyKey}::uuid
      union all select xmin::text from audit_log where id = ${proposal?.id}::uuid`.execute(world.ctx.db);
    assert.equal(writers.length, 3);
    assert.equal(new Set(writers.map((w) => w.xmin)).size, 1, 'one transaction');
    // The person's wallet is empty: the approval is refused by its rule, and nothing moves.
    const refused = failure(
      await post(world, 'adminApproveAdjustment', { id: proposed.id }, { token: auditor.accessToken }),
    );
    assert.equal(refused.code, 'INSUFFICIENT_FUNDS');
    const [approval] = await rowsOf(auditor.userId, 'adminApproveAdjustment');
    assert.equal(approval?.outcome, 'INSUFFICIENT_FUNDS');
    assert.deepEqual(approval?.input, { id: proposed.id });
    const { items } = ok(
      await get<{ items: Array<{ id: string; status: string }> }>(
        world,
        'adminListAdjustments',
        {},
        { token: auditor.accessToken },
      ),
    );
    assert.equal(items.find((a) => a.id === proposed.id)?.status, 'proposed', 'the refusal changed nothing');
    // Each POST's row exists exactly once, whatever the path that wrote it.
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from audit_log
      where operation in ('adminProposeAdjustment', 'adminApproveAdjustment')`.execute(world.ctx.db);
    assert.equal(rows[0]?.n, '2');
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the trail, in the database itself', async () => {
    const count = async () =>
      (await sql<{ n: string }>`select count(*)::text as n from audit_log`.execute(world.ctx.db)).rows[0]?.n;
    const before = await count();
    assert.ok(Number(before) > 0);
    await assert.rejects(
      sql`update audit_log set outcome = 'ok' where outcome <> 'ok'`.execute(world.ctx.db),
      /append-only \(UPDATE refused\)/,
    );
    await assert.rejects(sql`delete from audit_log`.execute(world.ctx.db), /append-only \(DELETE refused\)/);
    await assert.rejects(sql`truncate audit_log`.execute(world.ctx.db), /append-only \(TRUNCATE refused\)/);
    assert.equal(await count(), before);
    const outcomes = await sql<{
      outcome: string;
    }>`select outcome from audit_log where outcome <> 'ok'`.execute(world.ctx.db);
    assert.ok(outcomes.rows.length > 0, 'the refusals are still recorded as refusals');
  });

  it('lists newest first, filtered by admin, operation and Lagos day, in pages', async () => {
    const all = ok(await list());
    assert.ok(all.total >= 10);
    const times = all.items.map((row) => Date.parse(row.at));
    assert.deepEqual(
      times,
      times.toSorted((a, b) => b - a),
      'newest first',
    );
    // Pages of rows no request adds to meanwhile (each list adds its own row to the trail).
    const markups = ok(await list({ operation: 'adminSetMarkup' }));
    assert.ok(markups.total >= 4);
    const page = ok(await list({ operation: 'adminSetMarkup', limit: 2, offset: 1 }));
    assert.deepEqual(
      page.items.map((row) => row.id),
      markups.items.slice(1, 3).map((row) => row.id),
    );
    assert.deepEqual([page.limit, page.offset, page.total], [2, 1, markups.total]);

    const mine = ok(await list({ adminId: proposer.userId }));
    assert.ok(mine.items.length > 0);
    assert.ok(mine.items.every((row) => row.adminId === proposer.userId));
    const op = ok(await list({ operation: 'adminVerifyTotp' }));
    assert.ok(op.items.length >= 2);
    assert.ok(op.items.every((row) => row.operation === 'adminVerifyTotp'));

    // The whole Lagos day of now holds every row; the day before holds none, the day after none.
    const lagosDay = (offsetDays: number) =>
      new Date(world.ctx.clock.now().getTime() + 3_600_000 + offsetDays * 86_400_000)
        .toISOString()
        .slice(0, 10);
    const today = ok(await list({ from: lagosDay(0), to: lagosDay(0) }));
    assert.ok(today.total >= all.total, 'every row so far is today, in Lagos');
    assert.equal(ok(await list({ to: lagosDay(-1) })).total, 0);
    assert.equal(ok(await list({ from: lagosDay(1) })).total, 0);
    const backwards = failure(await list({ from: lagosDay(0), to: lagosDay(-1) }));
    assert.equal(backwards.code, 'VALIDATION_ERROR');

    // Reading the trail is itself in the trail.
    const reads = ok(await list({ operation: 'adminListAuditLog', adminId: auditor.userId }));
    assert.ok(reads.items.length > 0);
  });
});
