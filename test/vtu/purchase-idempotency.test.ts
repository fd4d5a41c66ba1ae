import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  completionWithCommit,
  createIdempotencyStore,
  type IdempotencyRequest,
  type IdempotencyStore,
} from '../../src/http/idempotency-store.ts';
import type { PurchaseOrder } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, post, type World } from '../helpers/world.ts';
import { buyer, mtn, PIN } from './purchase-support.ts';

// A purchase's Idempotency-Key is completed by the transaction that accepts the purchase, so that the
// stored answer exists exactly when the purchase does. Completed after that commit instead, a crash
// between the two would leave the key running, and once stale a retry with it would buy again.

const airtime = (naira: number): PurchaseOrder => {
  const phone = mtn('5');
  const kobo = BigInt(naira * 100);
  return {
    service: 'airtime',
    provider: 'bills',
    network: 'mtn',
    recipient: phone,
    request: { service: 'airtime', network: 'mtn', phone, amountKobo: kobo },
    wholesaleKobo: kobo,
    markupKobo: 0n,
    description: `₦${naira} MTN airtime to ${phone}`,
  };
};

describe(`a purchase's idempotency key (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let store: IdempotencyStore;
  before(async () => {
    world = await createWorld();
    store = createIdempotencyStore(world.ctx.db, 'test-pepper', world.ctx.database.batching);
  });
  after(() => world.close());

  const taken = async (userId: string): Promise<IdempotencyRequest> => {
    const request = { scope: userId, key: randomUUID(), operation: 'buyAirtime', requestHash: 'h' };
    assert.equal((await store.begin(request, world.ctx.clock.now())).kind, 'started');
    return request;
  };

  it('is completed, with the answer it reports, by the transaction that accepts the purchase', async () => {
    const user = await buyer(world, 1_000);
    const request = await taken(user.userId);
    const completion = completionWithCommit(store, request, (result) => JSON.stringify({ result }));

    const accepted = await world.ctx.modules.vtu.api.acceptPurchase(user.userId, airtime(200), completion);
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);

    const again = await store.begin(request, world.ctx.clock.now());
    assert.equal(again.kind, 'replay', 'done without the router completing it');
    assert.equal(again.kind === 'replay' && again.response.status, 200);
    const stored = again.kind === 'replay' ? again.response.body : '';
    assert.equal(stored, completion.committedBody(), 'the body stored is the body the router sends');
    assert.deepEqual(JSON.parse(stored), { result: { ...accepted } });
  });

  it('a purchase refused for want of funds leaves its key to the router: nothing was committed with it', async () => {
    const user = await buyer(world, 100);
    const request = await taken(user.userId);
    const completion = completionWithCommit(store, request, (result) => JSON.stringify({ result }));

    await assert.rejects(
      world.ctx.modules.vtu.api.acceptPurchase(user.userId, airtime(500), completion),
      (error: Error & { code?: string }) => error.code === 'INSUFFICIENT_FUNDS',
    );
    assert.equal(completion.committedBody(), undefined);
    assert.equal((await store.begin(request, world.ctx.clock.now())).kind, 'in_progress');
  });

  it('over HTTP: the same key again replays the purchase, byte for byte, and buys nothing more', async () => {
    const user = await buyer(world, 1_000);
    const key = randomUUID();
    const input = { network: 'mtn', phone: mtn('5'), amount: 300, pin: PIN };
    const first = await post(world, 'buyAirtime', input, { token: user.accessToken, idempotencyKey: key });
    const bought = ok(first) as { id: string };
    const second = await post(world, 'buyAirtime', input, { token: user.accessToken, idempotencyKey: key });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(second.body, first.body);
    const purchases = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('id')
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(
      purchases.map((p) => p.id),
      [bought.id],
    );
  });
});
