import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { applyMarkup, markupAmong, readMarkups } from '../../src/catalogue/pricing.ts';
import { basisPointsToPercent, koboToNaira, nairaToKobo, percentToBasisPoints } from '../../src/money.ts';
import type { DataPlanItem } from '../../src/providers/vtu/vtu-provider.ts';
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

// Retail = wholesale + markup (SPEC.md item 6; API.md section 11 adminSetMarkup): flat kobo plus a
// percentage rounded up to the kobo, per service and optionally per provider (which wins). Checked
// through the catalogue and quotePrice, and the functions the purchase flow calls.

const BOUNDED = { timeout: 60_000 };

type Markup = { service: string; provider: string | null; flat: number; percent: number; updatedAt: string };
type Quote = { service: string; provider: string; wholesale: number; markup: number; retail: number };
type Plan = { plan_id: string; amount: number };

/** Retail kobo by the rule, computed independently of src/catalogue/pricing.ts. */
function expectedRetail(wholesaleKobo: bigint, flatKobo: bigint, percentBp: bigint): bigint {
  const scaled = wholesaleKobo * percentBp;
  const percentKobo = scaled / 10_000n + (scaled % 10_000n === 0n ? 0n : 1n);
  return wholesaleKobo + flatKobo + percentKobo;
}

describe('markup arithmetic', () => {
  it('rounds the percentage up to the kobo, never down', () => {
    assert.deepEqual(applyMarkup({ flatKobo: 0n, percentBp: 100 }, 1n), { retailKobo: 2n, markupKobo: 1n });
    assert.deepEqual(applyMarkup({ flatKobo: 0n, percentBp: 250 }, 40_000n), {
      retailKobo: 41_000n,
      markupKobo: 1_000n,
    });
    assert.deepEqual(applyMarkup({ flatKobo: 500n, percentBp: 33 }, 38_000n), {
      retailKobo: 38_626n,
      markupKobo: 626n,
    });
    assert.deepEqual(applyMarkup({ flatKobo: 0n, percentBp: 0 }, 0n), { retailKobo: 0n, markupKobo: 0n });
  });

  it('is the exact rule for any wholesale price, flat and percentage', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 9n }),
        fc.integer({ min: 0, max: 10_000 }),
        (wholesale, flat, bp) => {
          const price = applyMarkup({ flatKobo: flat, percentBp: bp }, wholesale);
          assert.equal(price.retailKobo, expectedRetail(wholesale, flat, BigInt(bp)));
          assert.equal(price.retailKobo - price.markupKobo, wholesale);
          // Never under the exact percentage, and less than a kobo over it.
          const exact = wholesale * BigInt(bp);
          const percentKobo = price.markupKobo - flat;
          assert.ok(percentKobo * 10_000n >= exact);
          assert.ok((percentKobo - 1n) * 10_000n < exact);
        },
      ),
    );
  });

  it('reads percentages with at most two decimals as basis points, through their digits', () => {
    assert.equal(percentToBasisPoints(2.5), 250);
    assert.equal(percentToBasisPoints(0.01), 1);
    assert.equal(percentToBasisPoints(100), 10_000);
    assert.equal(percentToBasisPoints(33.33), 3_333);
    assert.equal(percentToBasisPoints(0.1 + 0.2), null, '0.30000000000000004 has more than two decimals');
    assert.equal(percentToBasisPoints(100.01), null);
    assert.equal(percentToBasisPoints(-1), null);
    assert.equal(percentToBasisPoints(1.005), null);
    for (const bp of [0, 1, 250, 3_333, 10_000])
      assert.equal(percentToBasisPoints(basisPointsToPercent(bp)), bp);
  });
});

describe(`markups and quotes (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  let user: SignedIn;
  const adminPhone = uniquePhone();
  let mtnPlans: DataPlanItem[];

  const setMarkup = async (data: Record<string, unknown>) =>
    ok(await post<Markup>(world, 'adminSetMarkup', data, { token: admin.accessToken }));
  const dataPlans = async () =>
    ok(await get<{ items: Plan[] }>(world, 'listDataPlans', { network: 'mtn' }, { token: user.accessToken }))
      .items;
  const quote = async (data: Record<string, unknown>) =>
    ok(await post<Quote>(world, 'quotePrice', data, { token: user.accessToken }));

  /** The catalogue's prices must be the wholesale ones under exactly this markup. */
  async function assertDataPlansAt(flatKobo: bigint, percentBp: bigint) {
    const plans = await dataPlans();
    assert.equal(plans.length, mtnPlans.length);
    for (const [index, plan] of plans.entries()) {
      const wholesale = mtnPlans[index]!;
      assert.equal(plan.plan_id, wholesale.planId);
      assert.equal(
        plan.amount,
        koboToNaira(expectedRetail(wholesale.wholesaleKobo, flatKobo, percentBp)),
        `${plan.plan_id} at flat ${flatKobo} kobo + ${percentBp} bp`,
      );
      // quotePrice of the same wholesale says the same price.
      const quoted = await quote({ service: 'data', wholesale: koboToNaira(wholesale.wholesaleKobo) });
      assert.equal(quoted.retail, plan.amount);
    }
  }

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
    user = await signIn(world);
    mtnPlans = await world.ctx.vtuProviders.data.dataPlans('mtn');
  });
  after(() => world.close());

  it(
    'without a markup, retail is the wholesale price and quotePrice names the routed provider',
    BOUNDED,
    async () => {
      await assertDataPlansAt(0n, 0n);
      assert.deepEqual(await quote({ service: 'data', wholesale: 560 }), {
        service: 'data',
        provider: 'data',
        wholesale: 560,
        markup: 0,
        retail: 560,
      });
      assert.equal((await quote({ service: 'airtime', wholesale: 100 })).provider, 'bills');
    },
  );

  it(
    'adminSetMarkup is for administrators: 403 FORBIDDEN for a user, 401 without a token',
    BOUNDED,
    async () => {
      const forbidden = failure(
        await post(world, 'adminSetMarkup', { service: 'data', flat: 5 }, { token: user.accessToken }),
      );
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.code, 'FORBIDDEN');
      assert.equal(failure(await post(world, 'adminSetMarkup', { service: 'data', flat: 5 })).status, 401);
      await assertDataPlansAt(0n, 0n);
    },
  );

  it('refuses bad markups with 400 naming the field', BOUNDED, async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ service: 'lottery', flat: 1 }, 'service'],
      [{ service: 'data', provider: 'elsewhere', flat: 1 }, 'provider'],
      [{ service: 'data', flat: -1 }, 'flat'],
      [{ service: 'data', flat: 1.234 }, 'flat'],
      [{ service: 'data', percent: 100.5 }, 'percent'],
      [{ service: 'data', percent: -0.5 }, 'percent'],
      [{ service: 'data', percent: 2.555 }, 'percent'],
      [{ service: 'data', flat: '10' }, 'flat'],
      [{ service: 'data' }, 'flat'],
      [{ service: 'data', flat: 1, extra: true }, 'extra'],
      // Above the configured maxima (defaults: ₦10,000 flat, 50 percent).
      [{ service: 'data', flat: 10_000.01 }, 'flat'],
      [{ service: 'data', flat: 91_967_931 }, 'flat'],
      [{ service: 'data', percent: 50.01 }, 'percent'],
      [{ service: 'data', flat: 1, percent: 51 }, 'percent'],
    ];
    for (const [data, field] of cases) {
      const error = failure(await post(world, 'adminSetMarkup', data, { token: admin.accessToken }));
      assert.equal(error.status, 400, JSON.stringify(data));
      assert.equal(error.code, 'VALIDATION_ERROR');
      const paths = (error.details as { issues: Array<{ path: string[] }> }).issues.map((i) =>
        i.path.join('.'),
      );
      assert.ok(paths.includes(`data.${field}`), `${JSON.stringify(data)}: ${paths.join(', ')}`);
    }
    await assertDataPlansAt(0n, 0n);
  });

  it('a flat markup raises every plan by exactly that, at once', BOUNDED, async () => {
    const stored = await setMarkup({ service: 'data', flat: 10.5 });
    assert.equal(stored.service, 'data');
    assert.equal(stored.provider, null);
    assert.equal(stored.flat, 10.5);
    assert.equal(stored.percent, 0);
    assert.ok(!Number.isNaN(Date.parse(stored.updatedAt)));
    await assertDataPlansAt(1_050n, 0n);
  });

  it('a percentage alone keeps the flat part; both apply, rounded up to the kobo', BOUNDED, async () => {
    const stored = await setMarkup({ service: 'data', percent: 0.33 });
    assert.equal(stored.flat, 10.5);
    assert.equal(stored.percent, 0.33);
    await assertDataPlansAt(1_050n, 33n);
    // ₦380 at 0.33 % is 125.4 kobo: the user pays 126.
    const quoted = await quote({ service: 'data', wholesale: 380 });
    assert.equal(quoted.markup, 11.76);
    assert.equal(quoted.retail, 391.76);
  });

  it("a provider's own markup wins over the service-wide one, for that provider only", BOUNDED, async () => {
    const stored = await setMarkup({ service: 'data', provider: 'data', flat: 50, percent: 2.5 });
    assert.equal(stored.provider, 'data');
    await assertDataPlansAt(5_000n, 250n);
    // Data sold through another provider still takes the service-wide markup.
    assert.deepEqual(await quote({ service: 'data', provider: 'bills', wholesale: 380 }), {
      service: 'data',
      provider: 'bills',
      wholesale: 380,
      markup: 11.76,
      retail: 391.76,
    });
    // Setting the service-wide markup again changes nothing for the provider with its own row.
    await setMarkup({ service: 'data', flat: 1 });
    await assertDataPlansAt(5_000n, 250n);
  });

  it('markups are per service: cable plans move with the cable markup only', BOUNDED, async () => {
    const wholesale = await world.ctx.vtuProviders.bills.cablePlans('gotv');
    const read = async () =>
      ok(
        await get<{ items: Plan[] }>(
          world,
          'listCablePlans',
          { identifier: 'gotv' },
          { token: user.accessToken },
        ),
      ).items;
    assert.deepEqual(
      (await read()).map((p) => p.amount),
      wholesale.map((p) => koboToNaira(p.wholesaleKobo)),
    );
    await setMarkup({ service: 'cable', percent: 1.25 });
    assert.deepEqual(
      (await read()).map((p) => p.amount),
      wholesale.map((p) => koboToNaira(expectedRetail(p.wholesaleKobo, 0n, 125n))),
    );
    // The configured maxima themselves are accepted.
    await setMarkup({ service: 'cable', flat: 10_000, percent: 50 });
    assert.deepEqual(
      (await read()).map((p) => p.amount),
      wholesale.map((p) => koboToNaira(expectedRetail(p.wholesaleKobo, 1_000_000n, 5_000n))),
    );
    await setMarkup({ service: 'cable', flat: 0, percent: 0 });
    assert.deepEqual(
      (await read()).map((p) => p.amount),
      wholesale.map((p) => koboToNaira(p.wholesaleKobo)),
    );
  });

  it(
    'the markup the purchase flow charges (readMarkups, markupAmong) agrees with the catalogue',
    BOUNDED,
    async () => {
      // As vtu/purchase-ops.ts prices a purchase: every stored markup read once, the buyer's picked
      // among them by level (a buyer on no level here), applied to the wholesale price.
      const rows = await readMarkups(world.ctx.db);
      const markup = markupAmong(rows, 'data', 'data', null);
      const wholesaleKobo = mtnPlans[0]!.wholesaleKobo;
      const price = applyMarkup(markup, wholesaleKobo);
      assert.equal(price.retailKobo, expectedRetail(wholesaleKobo, 5_000n, 250n));
      assert.equal(price.markupKobo, price.retailKobo - wholesaleKobo);
      assert.deepEqual(
        mtnPlans.map((p) => koboToNaira(applyMarkup(markup, p.wholesaleKobo).retailKobo)),
        (await dataPlans()).map((p) => p.amount),
      );
      // No row for a service: no markup.
      assert.deepEqual(applyMarkup(markupAmong(rows, 'social', 'social', null), 999n), {
        retailKobo: 999n,
        markupKobo: 0n,
      });
    },
  );

  it('quotePrice validates its input', BOUNDED, async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ service: 'lottery', wholesale: 1 }, 'service'],
      [{ service: 'data', wholesale: 1.001 }, 'wholesale'],
      [{ service: 'data', wholesale: -5 }, 'wholesale'],
      [{ service: 'data', provider: 'x', wholesale: 5 }, 'provider'],
      [{ service: 'data' }, 'wholesale'],
    ];
    for (const [data, field] of cases) {
      const error = failure(await post(world, 'quotePrice', data, { token: user.accessToken }));
      assert.equal(error.status, 400, JSON.stringify(data));
      const paths = (error.details as { issues: Array<{ path: string[] }> }).issues.map((i) =>
        i.path.join('.'),
      );
      assert.ok(paths.includes(`data.${field}`), `${JSON.stringify(data)}: ${paths.join(', ')}`);
    }
    assert.equal(nairaToKobo((await quote({ service: 'electricity', wholesale: 0.01 })).retail), 1n);
  });
});
