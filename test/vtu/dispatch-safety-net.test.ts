import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { checkLedger } from '../../src/ledger/check.ts';
import { vtuDispatchJob } from '../../src/vtu/dispatch.ts';
import { onPostgres } from '../helpers/database.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { buyCall, buyer, current, mtn } from './purchase-support.ts';

// A purchase is sent by the process that accepted it, right after the commit (src/vtu/accept.ts).
// When that dispatch fails (here its claim: the database refuses to mark the purchase sent, as a
// lost connection or a deadlock would), the purchase is not left to the logs: it is handed to the
// dispatch job, which a worker runs and pg-boss retries, and which sends it once the fault is gone.
// The wallet stays charged meanwhile, the purchase processing, and the provider is called once.

describe(`a dispatch that failed after acceptance (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
    // The claim of a purchase to a recipient named in this table fails, as long as it is named there.
    await sql`create table test_refused_claims (recipient text primary key)`.execute(world.ctx.db);
    await sql`
      create function test_refuse_claim() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from test_refused_claims where recipient = new.recipient) then
          raise exception 'the test refuses to claim a purchase to %', new.recipient;
        end if;
        return new;
      end $$`.execute(world.ctx.db);
    await sql`
      create trigger test_refuse_claim before update of sent_at on vtu_transactions
      for each row when (old.sent_at is null and new.sent_at is not null)
      execute function test_refuse_claim()`.execute(world.ctx.db);
  });
  after(() => world.close());

  const dispatchJobsNaming = async (id: string) =>
    (
      await sql<{ state: string }>`
        select state from pgboss.job
        where name = ${vtuDispatchJob.name} and data->'ids' @> to_jsonb(${id}::text)`.execute(world.ctx.db)
    ).rows.map((row) => row.state);

  it('is handed to the dispatch job, which sends it once the fault is gone; the provider is called once', async () => {
    const user = await buyer(world, 5_000);
    const phone = mtn('5');
    await sql`insert into test_refused_claims (recipient) values (${phone})`.execute(world.ctx.db);
    const bills = world.ctx.vtuProviders.bills;
    const purchase = bills.purchase;
    const sent: string[] = [];
    bills.purchase = async (request) => {
      sent.push(request.reference);
      return purchase(request);
    };
    try {
      const accepted = ok(await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone, amount: 200 }));
      assert.equal(accepted.status, 'processing');
      // The inline dispatch has ended: it failed, and handed the purchase on.
      await world.ctx.modules.vtu.api.sendEnded(accepted.id);
      const row = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select(['status', 'sent_at'])
        .where('id', '=', accepted.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'processing', sent_at: null }, 'not sent, not settled');
      assert.deepEqual(sent, [], 'the provider has not heard of it');
      assert.deepEqual(
        await dispatchJobsNaming(accepted.id),
        ['created', 'created'],
        "the acceptance's own job, and the one the failed dispatch handed it to",
      );

      // The fault is gone; a worker runs the queued dispatch jobs.
      await sql`delete from test_refused_claims where recipient = ${phone}`.execute(world.ctx.db);
      const { failed } = await runQueuedJobs(world, vtuDispatchJob);
      assert.deepEqual(failed, []);
      assert.equal((await current(world, user, accepted.id)).status, 'success', 'sent by the job');
      assert.deepEqual(sent, [accepted.reference], 'once, whichever job ran first');
      const check = await checkLedger(world.ctx.db);
      assert.ok(check.ok, JSON.stringify(check.imbalances));
    } finally {
      bills.purchase = purchase;
    }
  });

  it('a dispatch job that fails too is retried by pg-boss, and sends the purchase on a later run', async () => {
    const user = await buyer(world, 5_000);
    const phone = mtn('5');
    await sql`insert into test_refused_claims (recipient) values (${phone})`.execute(world.ctx.db);
    const accepted = ok(await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone, amount: 300 }));
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);

    // Still refused: the jobs fail, and pg-boss keeps them for a retry.
    const first = await runQueuedJobs(world, vtuDispatchJob);
    assert.equal(first.failed.length, 2);
    assert.deepEqual(await dispatchJobsNaming(accepted.id), ['retry', 'retry']);
    assert.equal((await current(world, user, accepted.id)).status, 'processing');

    await sql`delete from test_refused_claims where recipient = ${phone}`.execute(world.ctx.db);
    // The retry, run now rather than after pg-boss's backoff: the handler a worker would run.
    await world.ctx.jobs.runNow(vtuDispatchJob, { ids: [accepted.id] });
    assert.equal((await current(world, user, accepted.id)).status, 'success');
  });
});
