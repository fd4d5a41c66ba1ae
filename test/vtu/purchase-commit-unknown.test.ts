import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { vtuDispatchJob } from '../../src/vtu/dispatch.ts';
import { walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.ts';
import { createWorld, ok, post, type World } from '../helpers/world.ts';
import { type Buyer, buyer, mtn, PIN } from './purchase-support.ts';

// A batch of purchases whose COMMIT PostgreSQL carried out but whose answer was lost (the connection
// cut right after COMMIT was sent). The service cannot tell from the error whether the debits
// happened; it must find out, not run the batch again as new purchases. Every purchase is debited
// once, sent once, and its Idempotency-Key replays the one answer.

const purchasesInBatch = 8;

describe('a purchase batch whose COMMIT answer is lost', {
  skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): the fault is a cut TCP connection',
}, () => {
  let world: World;
  let proxy: PgProxy;
  let user: Buyer;

  before(async () => {
    world = await createWorld({
      databaseUrl: async (url) => {
        proxy = await startPgProxy(url);
        return proxy.url;
      },
    });
    user = await buyer(world, 10_000);
  });
  after(async () => {
    await world?.close();
    await proxy?.close();
  });

  it('debits, records and sends each purchase once, and replays each key with the one answer', async () => {
    const bills = world.ctx.vtuProviders.bills;
    const purchase = bills.purchase;
    const sent: string[] = [];
    bills.purchase = async (request) => {
      sent.push(request.reference);
      return purchase(request);
    };
    try {
      const before = await walletKobo(world, user.userId);
      proxy.armCommitCut(/insert into vtu_transactions/);
      const requests = Array.from({ length: purchasesInBatch }, () => ({
        key: randomUUID(),
        data: { network: 'mtn', phone: mtn('5'), amount: 100, pin: PIN },
      }));
      const answers = await Promise.all(
        requests.map(({ key, data }) =>
          post<{ id: string; reference: string }>(world, 'buyAirtime', data, {
            token: user.accessToken,
            idempotencyKey: key,
          }),
        ),
      );
      await proxy.cut();
      const accepted = answers.map((answer) => ok(answer));
      await Promise.all(accepted.map(({ id }) => world.ctx.modules.vtu.api.sendEnded(id)));
      // The durable job of the batch runs too, as it would after a crash: it sends nothing again.
      await world.ctx.jobs.runNow(vtuDispatchJob, { ids: accepted.map(({ id }) => id) });

      const rows = await world.ctx.db
        .selectFrom('vtu_transactions')
        .select(['id', 'reference', 'recipient', 'amount', 'status'])
        .where('user_id', '=', user.userId)
        .execute();
      assert.equal(rows.length, purchasesInBatch, 'one purchase recorded per request');
      assert.deepEqual(new Set(rows.map((r) => r.id)), new Set(accepted.map((a) => a.id)));
      const charged = rows.reduce((sum, row) => sum + BigInt(row.amount), 0n);
      assert.equal(await walletKobo(world, user.userId), before - charged, 'each purchase debited once');
      assert.deepEqual([...sent].sort(), rows.map((r) => r.reference).sort(), 'each purchase sent once');

      for (const [i, { key, data }] of requests.entries()) {
        const again = await post(world, 'buyAirtime', data, { token: user.accessToken, idempotencyKey: key });
        assert.equal(again.headers.get('idempotent-replayed'), 'true');
        assert.equal(ok(again as (typeof answers)[number]).id, accepted[i]!.id);
      }
      assert.equal(sent.length, purchasesInBatch);
    } finally {
      bills.purchase = purchase;
    }
  });
});
