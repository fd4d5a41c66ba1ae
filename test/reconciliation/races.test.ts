import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import type { ReconciliationItemView } from '../../src/reconciliation/schemas.ts';
import {
  assertLedgerOk,
  createIntent,
  creditPostings,
  payWithoutWebhook,
  processed,
  providerChargeSuccess,
  sendWebhook,
  walletKobo,
} from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, signIn, uniquePhone, type World } from '../helpers/world.ts';

// An operator's credit of a payment the provider took (API.md 17.5) racing itself and the payment's
// late webhook. On PostgreSQL the requests take separate connections, so only the top-up intent's
// lock and the item's lock order them; PGlite runs transactions one at a time, so the race proves
// nothing there and is skipped.

const skip = !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite runs one transaction at a time';

describe(`a reconciliation credit under racing requests (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, {
  skip,
}, () => {
  let world: World;
  const adminPhone = uniquePhone();
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  it('20 operators crediting one missingHere payment while its webhook arrives: credited once', async () => {
    const admin = await signIn(world, adminPhone);
    const user = await signIn(world);
    const from = world.ctx.clock.now();
    const lostWebhook = await createIntent(world, user, 2_500);
    await payWithoutWebhook(world, lostWebhook);
    const lostIntent = await createIntent(world, user, 4_000);
    await payWithoutWebhook(world, lostIntent);
    await world.ctx.db.deleteFrom('topup_intents').where('reference', '=', lostIntent.reference).execute();
    const to = new Date(world.ctx.clock.now().getTime() + 60_000);
    const run = ok(
      await post<{ id: string }>(
        world,
        'adminRunReconciliation',
        { source: 'payments', from: from.toISOString(), to: to.toISOString() },
        { token: admin.accessToken },
      ),
    );
    assert.deepEqual((await runQueuedJobs(world, reconciliationRunJob)).failed, []);
    const { items } = ok(
      await get<{ items: ReconciliationItemView[] }>(
        world,
        'adminGetReconciliation',
        { id: run.id, bucket: 'missingHere' },
        { token: admin.accessToken },
      ),
    );
    assert.equal(items.length, 2);

    for (const item of items) {
      const webhook = await providerChargeSuccess(world, item.reference);
      const answers = await Promise.all([
        ...Array.from({ length: 20 }, () =>
          post<ReconciliationItemView>(
            world,
            'adminResolveReconciliationItem',
            { id: item.id, action: 'credit', reason: 'paid at the provider, never credited' },
            { token: admin.accessToken },
          ),
        ),
        sendWebhook(world, webhook).then(() => processed(world, webhook)),
      ]);
      const resolutions = answers.slice(0, 20) as Array<{ status: number }>;
      const accepted = resolutions.filter((a) => a.status === 200).length;
      const conflicts = resolutions.filter((a) => a.status === 409).length;
      assert.deepEqual([accepted, conflicts], [1, 19], 'one resolution, the rest 409 CONFLICT');
      assert.equal(await creditPostings(world, item.reference), 1, 'one credit posting');
    }
    assert.equal(await walletKobo(world, user.userId), 250_000n + 400_000n);
    await assertLedgerOk(world);
  });
});
