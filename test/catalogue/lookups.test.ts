import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createVtpassClient } from '../../src/providers/vtu/vtpass-client.ts';
import { type VtuProvider, VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  SANDBOX_BILLS_API_KEY,
  SANDBOX_BILLS_PUBLIC_KEY,
  SANDBOX_BILLS_SECRET_KEY,
} from '../../src/sandbox/vtu/bills.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';

// Customer look-ups (verifyCableIUC, verifyMeter, verifyBetAccount) against the sandbox bills
// provider, whose merchant-verify knows every number except those ending in 9 (src/sandbox/vtu/bills.ts).
// Found: 200 {found: true, name, details}; not found: 404 NOT_FOUND; provider unreachable: 502.

const BOUNDED = { timeout: 60_000 };

type Found = { found: true; name: string; details: Record<string, string> };

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe(`customer look-ups (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;

  const verify = (operation: string, data: Record<string, unknown>) =>
    post<Found>(world, operation, data, { token: user.accessToken });

  const cases = [
    {
      operation: 'verifyCableIUC',
      found: { iuc: '7027914328', identifier: 'dstv' },
      notFound: { iuc: '7027914329', identifier: 'dstv' },
      detail: 'Current_Bouquet',
    },
    {
      operation: 'verifyMeter',
      found: { meter: '45061234567', plan: 'ikeja-electric', type: 'prepaid' },
      notFound: { meter: '45061234569', plan: 'ikeja-electric', type: 'prepaid' },
      detail: 'Address',
    },
    {
      operation: 'verifyBetAccount',
      found: { betting_company: 'bet9ja', customer_id: '1234567' },
      notFound: { betting_company: 'bet9ja', customer_id: '1234569' },
      detail: null,
    },
  ] as const;

  before(async () => {
    world = await createWorld();
    user = await signIn(world);
  });
  after(() => world.close());

  for (const c of cases) {
    describe(c.operation, () => {
      it('answers the name the provider has for the number', BOUNDED, async () => {
        const answer = ok(await verify(c.operation, c.found));
        assert.equal(answer.found, true);
        assert.ok(answer.name.length > 0);
        for (const value of Object.values(answer.details)) assert.equal(typeof value, 'string');
        if (c.detail !== null) assert.ok(c.detail in answer.details, JSON.stringify(answer.details));
        // The same number gives the same name: the provider's answer, not something made up per call.
        assert.equal(ok(await verify(c.operation, c.found)).name, answer.name);
      });

      it(
        'answers 404 NOT_FOUND with the reason when the provider knows no such number',
        BOUNDED,
        async () => {
          const error = failure(await verify(c.operation, c.notFound));
          assert.equal(error.status, 404);
          assert.equal(error.code, 'NOT_FOUND');
          assert.equal(typeof (error.details as { reason?: unknown }).reason, 'string');
        },
      );

      it('needs a signed-in caller', BOUNDED, async () => {
        const error = failure(await post(world, c.operation, c.found));
        assert.equal(error.status, 401);
      });
    });
  }

  it('refuses malformed input with 400 naming the field', BOUNDED, async () => {
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['verifyCableIUC', { iuc: 'abc', identifier: 'dstv' }, 'iuc'],
      ['verifyCableIUC', { iuc: '7027914328' }, 'identifier'],
      ['verifyCableIUC', { iuc: '7027914328', identifier: 'nosuchtv' }, 'identifier'],
      ['verifyMeter', { meter: '45061234567', plan: 'ikeja-electric', type: 'smart' }, 'type'],
      ['verifyMeter', { meter: '45061234567', plan: 'atlantis-electric', type: 'prepaid' }, 'plan'],
      ['verifyMeter', { meter: '', plan: 'ikeja-electric', type: 'prepaid' }, 'meter'],
      ['verifyBetAccount', { betting_company: 'bet9ja' }, 'customer_id'],
      ['verifyBetAccount', { betting_company: 'nobet', customer_id: '1234567' }, 'betting_company'],
      ['verifyBetAccount', { betting_company: 'bet9ja', customer_id: 'a b' }, 'customer_id'],
      ['verifyBetAccount', { betting_company: 'bet9ja', customer_id: '1234567', pin: '1234' }, 'pin'],
    ];
    for (const [operation, data, field] of bad) {
      const error = failure(await verify(operation, data));
      assert.equal(error.status, 400, `${operation} ${JSON.stringify(data)}`);
      assert.equal(error.code, 'VALIDATION_ERROR');
      const paths = (error.details as { issues: Array<{ path: string[] }> }).issues.map((i) =>
        i.path.join('.'),
      );
      assert.ok(paths.includes(`data.${field}`), `${operation} ${JSON.stringify(data)}: ${paths.join(', ')}`);
    }
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when the provider is unreachable', BOUNDED, async () => {
    // The catalogues the look-ups check their ids against are cached by now; only the look-up fails.
    for (const c of cases) ok(await verify(c.operation, c.found));
    const providers = world.ctx.vtuProviders;
    const real: VtuProvider = providers.bills;
    const port = await closedPort();
    providers.bills = createVtpassClient({
      name: 'bills',
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: SANDBOX_BILLS_API_KEY,
      publicKey: SANDBOX_BILLS_PUBLIC_KEY,
      secretKey: SANDBOX_BILLS_SECRET_KEY,
      timeoutMs: 5_000,
    });
    try {
      for (const c of cases) {
        const error = failure(await verify(c.operation, c.found));
        assert.equal(error.status, 502, c.operation);
        assert.equal(error.code, 'UPSTREAM_UNAVAILABLE');
      }
    } finally {
      providers.bills = real;
    }
    ok(await verify('verifyMeter', cases[1].found));
  });

  it('answers 502 when the provider answers with an error of its own (a timeout, say)', BOUNDED, async () => {
    const bills = world.ctx.vtuProviders.bills;
    const original = bills.verifyCustomer;
    bills.verifyCustomer = async () => {
      throw new VtuProviderError('bills', 'merchant verify did not answer within 20000 ms');
    };
    try {
      const error = failure(await verify('verifyBetAccount', cases[2].found));
      assert.equal(error.status, 502);
      assert.equal(error.code, 'UPSTREAM_UNAVAILABLE');
      assert.doesNotMatch(error.message, /20000|bills:/, 'no provider internals in the message');
    } finally {
      bills.verifyCustomer = original;
    }
  });
});
