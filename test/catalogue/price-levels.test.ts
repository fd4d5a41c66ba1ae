import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { logicalAccount, systemAccounts, systemBalance, userAccount } from '../../src/ledger/accounts.ts';
import { koboToNaira, nairaToKobo } from '../../src/money.ts';
import type { DataPlanItem } from '../../src/providers/vtu/vtu-provider.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { purchasePostings } from '../../src/vtu/purchases.ts';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
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
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { type Buyer, bought, buyCall, buyer, mtn } from '../vtu/purchase-support.ts';

// Price levels (API.md section 16): a markup may belong to a level, and a user on that level pays its
// markups, falling back to the default markup per service and provider where the level has none.
// Two users, one on the default prices and one a reseller, see and pay different prices for the same
// plan: in quotePrice, in every catalogue that applies a markup, in what the purchase charges and in
// the ledger. Then the refusals, the list of levels, and purchases racing an administrator's changes.

const BOUNDED = { timeout: 120_000 };

type Quote = { service: string; provider: string; wholesale: number; markup: number; retail: number };
type Plan = { plan_id: string; amount: number };
type Me = { id: string; priceLevel: string | null };
type Level = {
  level: string | null;
  users: number;
  markups: Array<{
    service: string;
    provider: string | null;
    flat: number;
    percent: number;
    updatedAt: string;
  }>;
};

/** Retail kobo by the rule (flat + percentage rounded up to the kobo), apart from src/catalogue. */
function expectedRetail(wholesaleKobo: bigint, flatKobo: bigint, percentBp: bigint): bigint {
  const scaled = wholesaleKobo * percentBp;
  return wholesaleKobo + flatKobo + scaled / 10_000n + (scaled % 10_000n === 0n ? 0n : 1n);
}

/** The amounts a ledger posting moved, by account code. */
async function postingOf(world: World, reference: string): Promise<Map<string, bigint>> {
  const rows = await world.ctx.db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .select(['a.code', 'e.amount'])
    .where('t.reference', '=', reference)
    .execute();
  // By logical account: a posting moves one shard of each hot system account (LEDGER_SHARDS).
  return new Map(rows.map((row) => [logicalAccount(row.code), BigInt(row.amount)]));
}

describe(`price levels (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  /** On the default prices. */
  let shopper: Buyer;
  /** On the level "reseller". */
  let reseller: Buyer;
  let mtnPlans: DataPlanItem[];
  const adminPhone = uniquePhone();

  const asAdmin = () => ({ token: admin.accessToken });
  const setMarkup = async (data: Record<string, unknown>) =>
    ok(
      await post<Level['markups'][number] & { level: string | null }>(
        world,
        'adminSetMarkup',
        data,
        asAdmin(),
      ),
    );
  const setLevel = (userId: string, level: string | null) =>
    post<{ userId: string; level: string | null }>(
      world,
      'adminSetUserPriceLevel',
      { userId, level },
      asAdmin(),
    );
  const me = async (user: SignedIn) => ok(await get<Me>(world, 'getMe', {}, { token: user.accessToken }));
  const quote = async (user: SignedIn, data: Record<string, unknown>) =>
    ok(await post<Quote>(world, 'quotePrice', data, { token: user.accessToken }));
  const dataPlans = async (user: SignedIn) =>
    ok(await get<{ items: Plan[] }>(world, 'listDataPlans', { network: 'mtn' }, { token: user.accessToken }))
      .items;
  const levels = async () =>
    ok(await get<{ items: Level[] }>(world, 'adminListPriceLevels', {}, asAdmin())).items;

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
    [shopper, reseller] = [await buyer(world, 20_000), await buyer(world, 20_000)];
    mtnPlans = await world.ctx.vtuProviders.data.dataPlans('mtn');
    // The default: ₦20 on every data plan. The reseller level: ₦5 plus 1 % through the data provider.
    await setMarkup({ service: 'data', flat: 20 });
    const stored = await setMarkup({
      service: 'data',
      provider: 'data',
      level: 'reseller',
      flat: 5,
      percent: 1,
    });
    assert.deepEqual(
      [stored.level, stored.service, stored.provider, stored.flat, stored.percent],
      ['reseller', 'data', 'data', 5, 1],
    );
    assert.deepEqual(ok(await setLevel(reseller.userId, 'reseller')), {
      userId: reseller.userId,
      level: 'reseller',
    });
  });
  after(() => world.close());

  it("getMe says each user's level: null by default", BOUNDED, async () => {
    assert.equal((await me(shopper)).priceLevel, null);
    assert.equal((await me(reseller)).priceLevel, 'reseller');
  });

  it(
    'two users see different prices for the same plans, in the catalogue and in quotePrice',
    BOUNDED,
    async () => {
      const [shopperPlans, resellerPlans] = [await dataPlans(shopper), await dataPlans(reseller)];
      assert.equal(shopperPlans.length, mtnPlans.length);
      for (const [index, wholesale] of mtnPlans.entries()) {
        const w = wholesale.wholesaleKobo;
        assert.equal(
          shopperPlans[index]!.amount,
          koboToNaira(expectedRetail(w, 2_000n, 0n)),
          wholesale.planId,
        );
        assert.equal(
          resellerPlans[index]!.amount,
          koboToNaira(expectedRetail(w, 500n, 100n)),
          wholesale.planId,
        );
      }
      const sme = ok(
        await get<{ items: Plan[] }>(
          world,
          'listDataPlansForCategory',
          { network: 'mtn', planType: mtnPlans[0]!.planType },
          { token: reseller.accessToken },
        ),
      ).items;
      assert.equal(sme[0]!.amount, resellerPlans[0]!.amount);

      assert.deepEqual(await quote(shopper, { service: 'data', wholesale: 1_000 }), {
        service: 'data',
        provider: 'data',
        wholesale: 1_000,
        markup: 20,
        retail: 1_020,
      });
      assert.deepEqual(await quote(reseller, { service: 'data', wholesale: 1_000 }), {
        service: 'data',
        provider: 'data',
        wholesale: 1_000,
        markup: 15,
        retail: 1_015,
      });
    },
  );

  it(
    'each pays their own price for the same plan: the transaction, the wallet and the ledger say so',
    BOUNDED,
    async () => {
      const plan = mtnPlans[0]!;
      const prices = new Map<Buyer, bigint>([
        [shopper, expectedRetail(plan.wholesaleKobo, 2_000n, 0n)],
        [reseller, expectedRetail(plan.wholesaleKobo, 500n, 100n)],
      ]);
      assert.notEqual(prices.get(shopper), prices.get(reseller));
      for (const [user, retailKobo] of prices) {
        const before = await walletKobo(world, user.userId);
        const purchase = await bought(world, user, 'buyData', {
          network: 'mtn',
          plan_id: plan.planId,
          phone: mtn('5'),
          amount: koboToNaira(retailKobo),
        });
        assert.equal(purchase.status, 'success');
        assert.equal(purchase.amount, koboToNaira(retailKobo));
        assert.equal(await walletKobo(world, user.userId), before - retailKobo);
        const debit = await postingOf(world, purchasePostings.debit(purchase.reference));
        assert.equal(debit.get(userAccount('wallet', user.userId)), -retailKobo);
        const settle = await postingOf(world, purchasePostings.settle(purchase.reference));
        assert.equal(
          settle.get(systemAccounts.revenueMarkup),
          retailKobo - plan.wholesaleKobo,
          'the markup is revenue',
        );
      }
      // The default price is not the reseller's: 409 with the reseller's price, and nothing charged.
      const before = await walletKobo(world, reseller.userId);
      const refused = expectError(
        await buyCall(world, reseller, 'buyData', {
          network: 'mtn',
          plan_id: plan.planId,
          phone: mtn('5'),
          amount: koboToNaira(prices.get(shopper)!),
        }),
        409,
        'PRICE_CHANGED',
      );
      assert.deepEqual(refused.details, { amount: koboToNaira(prices.get(reseller)!) });
      assert.equal(await walletKobo(world, reseller.userId), before);
      await assertLedgerOk(world);
    },
  );

  it(
    'falls back to the default per service and provider where the level has no markup',
    BOUNDED,
    async () => {
      // The level names no cable markup: the reseller pays the default one, here ₦100.
      await setMarkup({ service: 'cable', flat: 100 });
      const cable = async (user: SignedIn) =>
        ok(
          await get<{ items: Plan[] }>(
            world,
            'listCablePlans',
            { identifier: 'dstv' },
            { token: user.accessToken },
          ),
        ).items;
      assert.deepEqual(await cable(reseller), await cable(shopper));
      assert.equal(
        (await quote(reseller, { service: 'cable', wholesale: 1_000 })).retail,
        1_100,
        'the default cable markup',
      );
      // Data through another provider: the level's row is for the data provider only, so its own
      // service-wide row is missing and the default service-wide ₦20 applies.
      assert.equal(
        (await quote(reseller, { service: 'data', provider: 'bills', wholesale: 1_000 })).retail,
        1_020,
      );

      // The level's service-wide row wins over the default's provider row: a level is resolved whole
      // before the default is looked at.
      await setMarkup({ service: 'airtime', provider: 'bills', flat: 3 });
      await setMarkup({ service: 'airtime', level: 'reseller', percent: 0.5 });
      assert.equal((await quote(shopper, { service: 'airtime', wholesale: 1_000 })).retail, 1_003);
      assert.equal((await quote(reseller, { service: 'airtime', wholesale: 1_000 })).retail, 1_005);
      const airtime = await bought(world, reseller, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 200,
      });
      assert.equal(airtime.amount, 201, '₦200 face value plus 0.5 %');
      const other = await bought(world, shopper, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 200,
      });
      assert.equal(other.amount, 203, '₦200 face value plus the default ₦3');
    },
  );

  it(
    "exam pins and social rates are listed at the caller's level, as their purchases charge",
    BOUNDED,
    async () => {
      await setMarkup({ service: 'education', flat: 50 });
      await setMarkup({ service: 'education', level: 'reseller', flat: 10 });
      await setMarkup({ service: 'social', percent: 10 });
      await setMarkup({ service: 'social', level: 'reseller', percent: 2 });
      const pins = async (user: SignedIn) =>
        ok(
          await get<{ items: Array<{ variation: string; amount: number }> }>(
            world,
            'listEducationPins',
            { exam: 'waec' },
            { token: user.accessToken },
          ),
        ).items;
      const [shopperPins, resellerPins] = [await pins(shopper), await pins(reseller)];
      assert.ok(shopperPins.length > 0);
      for (const [index, pin] of shopperPins.entries()) {
        assert.equal(
          nairaToKobo(pin.amount) - nairaToKobo(resellerPins[index]!.amount),
          4_000n,
          pin.variation,
        );
      }
      const pin = await bought(world, reseller, 'buyEducationPin', {
        exam: 'waec',
        variation: resellerPins[0]!.variation,
        quantity: 2,
        amount: resellerPins[0]!.amount * 2,
        phone: mtn('5'),
      });
      assert.equal(pin.status, 'success');
      assert.equal(pin.amount, resellerPins[0]!.amount * 2);

      const rates = async (user: SignedIn) =>
        ok(
          await get<{ items: Array<{ id: string; rate: number }> }>(
            world,
            'listSocialServices',
            {},
            {
              token: user.accessToken,
            },
          ),
        ).items;
      const wholesale = await world.ctx.vtuProviders.social.socialServices();
      const [shopperRates, resellerRates] = [await rates(shopper), await rates(reseller)];
      for (const [index, rate] of resellerRates.entries()) {
        const item = wholesale.find((w) => w.serviceId === rate.id)!;
        assert.equal(rate.rate, koboToNaira(expectedRetail(item.ratePer1000Kobo, 0n, 200n)), rate.id);
        assert.equal(
          shopperRates[index]!.rate,
          koboToNaira(expectedRetail(item.ratePer1000Kobo, 0n, 1_000n)),
        );
      }
    },
  );

  it('level null puts a user back on the default prices', BOUNDED, async () => {
    const other = await buyer(world, 0);
    ok(await setLevel(other.userId, 'reseller'));
    assert.equal((await quote(other, { service: 'data', wholesale: 1_000 })).retail, 1_015);
    assert.deepEqual(ok(await setLevel(other.userId, null)), { userId: other.userId, level: null });
    assert.equal((await me(other)).priceLevel, null);
    assert.equal((await quote(other, { service: 'data', wholesale: 1_000 })).retail, 1_020);
    assert.deepEqual(
      (await dataPlans(other)).map((p) => p.amount),
      (await dataPlans(shopper)).map((p) => p.amount),
    );
  });

  it('lists the levels with their markups and users, the default first', BOUNDED, async () => {
    await setMarkup({ service: 'betting', level: 'gold-2', flat: 1 });
    const items = await levels();
    assert.deepEqual(
      items.map((l) => l.level),
      [null, 'gold-2', 'reseller'],
    );
    const [byDefault, gold, resellers] = items as [Level, Level, Level];
    assert.equal(resellers.users, 1, 'the reseller alone');
    assert.equal(gold.users, 0);
    assert.ok(byDefault.users >= 3, 'the admin and the users on no level');
    assert.deepEqual(
      resellers.markups.map((m) => [m.service, m.provider, m.flat, m.percent]),
      [
        ['airtime', null, 0, 0.5],
        ['data', 'data', 5, 1],
        ['education', null, 10, 0],
        ['social', null, 0, 2],
      ],
    );
    assert.deepEqual(
      byDefault.markups.find((m) => m.service === 'data'),
      { ...byDefault.markups.find((m) => m.service === 'data')!, provider: null, flat: 20, percent: 0 },
    );
    expectError(
      await get(world, 'adminListPriceLevels', {}, { token: shopper.accessToken }),
      403,
      'FORBIDDEN',
    );
  });

  it('refuses bad level names, unknown levels and users with 4xx, and nothing changes', BOUNDED, async () => {
    const before = await levels();
    for (const level of [
      'Reseller',
      'default',
      '',
      '-gold',
      'gold-',
      'a'.repeat(33),
      'gold level',
      'gold_2',
      7,
    ]) {
      expectValidationAt(
        await post(world, 'adminSetMarkup', { service: 'data', level, flat: 1 }, asAdmin()),
        'data.level',
      );
    }
    const plainUser = await signIn(world);
    expectValidationAt(await setLevel(plainUser.userId, 'platinum'), 'data.level');
    expectValidationAt(await setLevel(plainUser.userId, 'Reseller'), 'data.level');
    expectValidationAt(await setLevel('not-a-uuid', 'reseller'), 'data.userId');
    expectValidationAt(
      await post(world, 'adminSetUserPriceLevel', { userId: plainUser.userId }, asAdmin()),
      'data.level',
    );
    expectError(await setLevel('01900000-0000-7000-8000-000000000000', 'reseller'), 404, 'NOT_FOUND');
    expectError(
      await post(
        world,
        'adminSetUserPriceLevel',
        { userId: plainUser.userId, level: 'reseller' },
        { token: plainUser.accessToken },
      ),
      403,
      'FORBIDDEN',
    );
    expectError(
      await post(
        world,
        'adminSetMarkup',
        { service: 'data', level: 'reseller', flat: 1 },
        { token: plainUser.accessToken },
      ),
      403,
      'FORBIDDEN',
    );
    assert.equal((await me(plainUser)).priceLevel, null);
    assert.deepEqual(
      await levels(),
      before.map((l) => (l.level === null ? { ...l, users: l.users + 1 } : l)),
    );
  });
});

describe(`price levels under concurrent purchases (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  it(
    'purchases by users of two levels racing an admin changing markups are each charged a price valid for their level',
    BOUNDED,
    async () => {
      const admin = await signIn(world, adminPhone);
      const asAdmin = { token: admin.accessToken };
      const change = async (data: Record<string, unknown>) =>
        ok(await post(world, 'adminSetMarkup', data, asAdmin));
      // Flat markups the race moves through: the default's in whole naira, gold's in kobo below ₦1,
      // so that a purchase charged the other level's price could not pass for its own.
      const defaultFlats = [10, 11, 12, 13, 14, 15];
      const goldFlats = [0.25, 0.3, 0.35, 0.4, 0.45, 0.5];
      await change({ service: 'airtime', flat: defaultFlats[0] });
      await change({ service: 'airtime', level: 'gold', flat: goldFlats[0] });
      const [plain, gold] = [await buyer(world, 100_000), await buyer(world, 100_000)];
      ok(await post(world, 'adminSetUserPriceLevel', { userId: gold.userId, level: 'gold' }, asAdmin));
      const before = new Map([
        [plain.userId, await walletKobo(world, plain.userId)],
        [gold.userId, await walletKobo(world, gold.userId)],
      ]);
      const revenueBefore = await revenueMarkup(world);

      const perUser = 15;
      const purchases = [plain, gold].flatMap((user) =>
        Array.from({ length: perUser }, () =>
          buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }).then((r) => ({
            user,
            purchase: ok(r),
          })),
        ),
      );
      const changes = (async () => {
        for (let step = 1; step < defaultFlats.length; step++) {
          await Promise.all([
            change({ service: 'airtime', flat: defaultFlats[step] }),
            change({ service: 'airtime', level: 'gold', flat: goldFlats[step] }),
          ]);
        }
      })();
      const [accepted] = await Promise.all([Promise.all(purchases), changes]);
      await Promise.all(accepted.map(({ purchase }) => world.ctx.modules.vtu.api.sendEnded(purchase.id)));

      const valid = new Map([
        [plain.userId, new Set(defaultFlats.map((f) => 100 + f))],
        [gold.userId, new Set(goldFlats.map((f) => 100 + f))],
      ]);
      const charged = new Map<string, bigint>([
        [plain.userId, 0n],
        [gold.userId, 0n],
      ]);
      let markups = 0n;
      for (const { user, purchase } of accepted) {
        const now = ok(
          await post<VtuTransactionView>(
            world,
            'getMyVtuTransaction',
            { id: purchase.id },
            {
              token: user.accessToken,
            },
          ),
        );
        assert.equal(now.status, 'success');
        assert.ok(valid.get(user.userId)!.has(now.amount), `${now.amount} is a price of the buyer's level`);
        const debit = await postingOf(world, purchasePostings.debit(now.reference));
        assert.equal(debit.get(userAccount('wallet', user.userId)), -nairaToKobo(now.amount));
        charged.set(user.userId, charged.get(user.userId)! + nairaToKobo(now.amount));
        markups += nairaToKobo(now.amount) - 10_000n;
      }
      for (const user of [plain, gold]) {
        assert.equal(
          await walletKobo(world, user.userId),
          before.get(user.userId)! - charged.get(user.userId)!,
        );
      }
      assert.equal((await revenueMarkup(world)) - revenueBefore, markups, 'every markup charged is revenue');
      await assertLedgerOk(world);
    },
  );
});

async function revenueMarkup(world: World): Promise<bigint> {
  return systemBalance(world.ctx.db, systemAccounts.revenueMarkup);
}
