import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors.ts';
import type { EventOf } from '../../src/events/domain-events.ts';

type KycEvent = EventOf<'kyc.tier_approved' | 'kyc.tier_rejected'>;

import { submitTier2 as submitTier2Service } from '../../src/kyc/service.ts';
import { createDojahKycProvider } from '../../src/providers/kyc/dojah-client.ts';
import { hashKeys } from '../../src/shared/keyed-hash.ts';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, signIn, type World } from '../helpers/world.ts';
import {
  deferred,
  eventJobs,
  expectValidationAt,
  kycUser,
  matchingNin,
  submissions,
  submitTier1,
  submitTier2,
  userAtTier,
} from './kyc-support.ts';

// The tier gate that money operations call (requireKycTier), the domain events a KYC decision
// publishes (kyc.tier_approved / kyc.tier_rejected, delivered by the job worker to subscribers),
// and a provider that never answers: 502 UPSTREAM_UNAVAILABLE, nothing recorded, nothing published.

/** Waits bounded by the test timeout, never by a sleep. */
const BOUNDED = { timeout: 30_000 };

async function guardError(world: World, userId: string, tier: 1 | 2 | 3): Promise<AppError | 'passed'> {
  try {
    await world.ctx.modules.kyc.api.requireKycTier(userId, tier);
    return 'passed';
  } catch (error) {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    return error;
  }
}

describe(`KYC guard and events (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  /** Every event the subscribers received, and the waiters for events still to come. */
  const received: KycEvent[] = [];
  const waiters: Array<{ matches: (e: KycEvent) => boolean; resolve: (e: KycEvent) => void }> = [];

  before(async () => {
    world = await createWorld();
    const record = async (event: KycEvent) => {
      received.push(event);
      for (const waiter of waiters.filter((w) => w.matches(event))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    };
    // Subscribed before the worker starts, as the service's own subscribers are.
    world.ctx.events.subscribe('kyc.tier_approved', record);
    world.ctx.events.subscribe('kyc.tier_rejected', record);
    await world.ctx.jobs.startWorkers();
  });
  after(() => world.close());

  /** The first event of this type for this user and tier, already received or still to come. */
  function nextEvent(type: KycEvent['type'], userId: string, tier: number): Promise<KycEvent> {
    const matches = (e: KycEvent) => e.type === type && e.userId === userId && e.tier === tier;
    const seen = received.find(matches);
    if (seen !== undefined) return Promise.resolve(seen);
    const { promise, resolve } = deferred<KycEvent>();
    waiters.push({ matches, resolve });
    return promise;
  }

  describe('requireKycTier', () => {
    it('refuses a fresh user tier 1 with KYC_TIER_REQUIRED (requiredTier 1), then lets tier 1 pass', async () => {
      const user = await kycUser(world);
      const refused = await guardError(world, user.userId, 1);
      assert.ok(refused instanceof AppError);
      assert.equal(refused.code, 'KYC_TIER_REQUIRED');
      assert.deepEqual(refused.details, { requiredTier: 1, currentTier: 0 });

      // A rejected tier 1 does not open the gate.
      assert.equal(ok(await submitTier1(world, user, 'sandbox-fail')).status, 'rejected');
      assert.equal(((await guardError(world, user.userId, 1)) as AppError).code, 'KYC_TIER_REQUIRED');

      assert.equal(ok(await submitTier1(world, user, 'sandbox-pass')).status, 'approved');
      assert.equal(await guardError(world, user.userId, 1), 'passed');
      const tier2 = await guardError(world, user.userId, 2);
      assert.ok(tier2 instanceof AppError);
      assert.equal(tier2.code, 'KYC_TIER_REQUIRED');
      assert.deepEqual(tier2.details, { requiredTier: 2, currentTier: 1 });
    });

    it('lets tier 1 and 2 pass after tier 2, and still refuses tier 3', async () => {
      const user = await userAtTier(world, 2);
      assert.equal(await guardError(world, user.userId, 1), 'passed');
      assert.equal(await guardError(world, user.userId, 2), 'passed');
      const tier3 = await guardError(world, user.userId, 3);
      assert.ok(tier3 instanceof AppError);
      assert.deepEqual([tier3.code, tier3.details?.requiredTier], ['KYC_TIER_REQUIRED', 3]);
    });
  });

  describe('domain events', () => {
    it('publishes kyc.tier_approved when tier 1 is approved', BOUNDED, async () => {
      const user = await signIn(world);
      const delivered = nextEvent('kyc.tier_approved', user.userId, 1);
      assert.equal(ok(await submitTier1(world, user, 'sandbox-pass')).status, 'approved');
      const event = await delivered;
      assert.deepEqual(
        { type: event.type, userId: event.userId, tier: event.tier },
        { type: 'kyc.tier_approved', userId: user.userId, tier: 1 },
      );
      assert.ok(!Number.isNaN(Date.parse(event.occurredAt)));
      assert.deepEqual(
        (await eventJobs(world, user.userId)).map((e) => [e.type, e.tier]),
        [['kyc.tier_approved', 1]],
      );
    });

    it('publishes kyc.tier_rejected, not kyc.tier_approved, when tier 1 is rejected', BOUNDED, async () => {
      const user = await signIn(world);
      const delivered = nextEvent('kyc.tier_rejected', user.userId, 1);
      const view = ok(await submitTier1(world, user, 'sandbox-fail'));
      assert.equal(view.status, 'rejected');
      const event = await delivered;
      assert.deepEqual(
        { type: event.type, userId: event.userId, tier: event.tier },
        { type: 'kyc.tier_rejected', userId: user.userId, tier: 1 },
      );
      assert.equal(event.type === 'kyc.tier_rejected' ? event.reason : undefined, view.reason);
      // Exactly one event was enqueued for this user, and it has been delivered: no approval.
      assert.deepEqual(
        (await eventJobs(world, user.userId)).map((e) => e.type),
        ['kyc.tier_rejected'],
      );
      assert.ok(!received.some((e) => e.userId === user.userId && e.type === 'kyc.tier_approved'));
    });

    it(
      'publishes nothing for a refused submission (unknown token, already approved, out of order)',
      BOUNDED,
      async () => {
        const user = await kycUser(world);
        expectValidationAt(await submitTier1(world, user, 'liv_unknown'), 'data.livenessToken');
        assert.equal((await submitTier2(world, user)).status, 422);
        assert.deepEqual(await eventJobs(world, user.userId), []);
        const delivered = nextEvent('kyc.tier_approved', user.userId, 1);
        ok(await submitTier1(world, user, 'sandbox-pass'));
        await delivered;
        assert.equal((await submitTier1(world, user, 'sandbox-pass')).status, 409);
        assert.equal((await eventJobs(world, user.userId)).length, 1);
      },
    );

    it('publishes kyc.tier_approved for tier 2 too', BOUNDED, async () => {
      const user = await userAtTier(world, 2);
      const event = await nextEvent('kyc.tier_approved', user.userId, 2);
      assert.equal(event.type, 'kyc.tier_approved');
    });
  });

  describe('a provider that never answers', () => {
    let server: Server;
    let port: number;
    const accepted = deferred<void>();
    before(async () => {
      // Accepts the request and never answers it.
      server = createServer(() => accepted.resolve());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('makes tier 2 fail with UPSTREAM_UNAVAILABLE, recording and publishing nothing', BOUNDED, async () => {
      const user = await userAtTier(world, 1);
      const approved = nextEvent('kyc.tier_approved', user.userId, 1);
      await approved;
      const deps = {
        db: world.ctx.db,
        clock: world.ctx.clock,
        jobs: world.ctx.jobs,
        provider: createDojahKycProvider({
          baseUrl: `http://127.0.0.1:${port}`,
          appId: 'x',
          secretKey: 'y',
          timeoutMs: 200,
        }),
        store: world.ctx.kyc.documents,
        pepper: hashKeys(world.ctx.config.secrets.pepper),
        banks: () => world.ctx.modules.catalogue.api.banks(),
        users: world.ctx.modules.auth.api,
      };
      const me = await world.ctx.db
        .selectFrom('users')
        .select('phone')
        .where('id', '=', user.userId)
        .executeTakeFirstOrThrow();
      await assert.rejects(
        submitTier2Service(deps, user.userId, { nin: matchingNin(), phone: me.phone }),
        (error: unknown) => error instanceof AppError && error.code === 'UPSTREAM_UNAVAILABLE',
      );
      // The provider was really asked (and kept silent): the failure is not a refusal before the call.
      await accepted.promise;
      assert.deepEqual(await submissions(world, user.userId, 2), []);
      assert.deepEqual(
        (await eventJobs(world, user.userId)).map((e) => [e.type, e.tier]),
        [['kyc.tier_approved', 1]],
      );
      // Nothing was left behind that blocks a later submission through the working provider.
      assert.equal(ok(await submitTier2(world, user)).status, 'approved');
    });
  });
});
