import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BeneficiaryView } from '../../src/beneficiaries/schemas.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';

// Beneficiaries (API.md section 16): saved by choice, listed most recently saved first, an upsert by
// service + recipient, at most 100 per user, and nobody else's to see or delete.

const save = (world: World, user: SignedIn, data: Record<string, unknown>) =>
  post<BeneficiaryView>(world, 'saveBeneficiary', data, { token: user.accessToken });
const list = async (world: World, user: SignedIn, query: Record<string, unknown> = {}) =>
  ok(await get<{ items: BeneficiaryView[] }>(world, 'listBeneficiaries', query, { token: user.accessToken }))
    .items;
const remove = (world: World, user: SignedIn, id: string) =>
  post<{ id: string }>(world, 'deleteBeneficiary', { id }, { token: user.accessToken });

/** A distinct meter number per call. */
let meterCounter = 0;
const meter = () => `4500${String(++meterCounter).padStart(8, '0')}`;

describe(`beneficiaries (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('saves a number in E.164 and lists it with its label and network', async () => {
    const user = await signIn(world);
    const saved = ok(
      await save(world, user, {
        service: 'airtime',
        label: '  Mum ',
        recipient: '0803 123 4567',
        network: 'mtn',
      }),
    );
    assert.deepEqual(
      { ...saved, id: undefined, createdAt: undefined },
      {
        id: undefined,
        service: 'airtime',
        label: 'Mum',
        recipient: '+2348031234567',
        network: 'mtn',
        createdAt: undefined,
      },
    );
    assert.ok(!Number.isNaN(Date.parse(saved.createdAt)));
    assert.deepEqual(await list(world, user), [saved]);
  });

  it('keeps details and lists most recently saved first, filtered by service', async () => {
    const user = await signIn(world);
    const home = ok(
      await save(world, user, {
        service: 'electricity',
        label: 'Home',
        recipient: '45001234567',
        details: { disco: 'ikeja-electric', type: 'prepaid' },
      }),
    );
    const tv = ok(
      await save(world, user, {
        service: 'cable',
        label: 'Parlour TV',
        recipient: '7023456789',
        details: { provider: 'dstv' },
      }),
    );
    const bet = ok(
      await save(world, user, {
        service: 'betting',
        label: 'Sports',
        recipient: 'AB12345',
        details: { company: 'bet9ja' },
      }),
    );
    const brother = ok(
      await save(world, user, { service: 'transfer', label: 'Tunde', recipient: '+2348091234567' }),
    );
    assert.deepEqual(home.details, { disco: 'ikeja-electric', type: 'prepaid' });
    assert.equal(brother.network, undefined);
    assert.equal(brother.details, undefined);
    assert.deepEqual(
      (await list(world, user)).map((b) => b.id),
      [brother.id, bet.id, tv.id, home.id],
    );
    assert.deepEqual(await list(world, user, { service: 'cable' }), [tv]);
    assert.deepEqual(await list(world, user, { service: 'data' }), []);
  });

  it('saving the same service and recipient again updates it instead of adding one', async () => {
    const user = await signIn(world);
    const first = ok(
      await save(world, user, { service: 'data', label: 'Me', recipient: '08031112222', network: 'mtn' }),
    );
    const other = ok(
      await save(world, user, { service: 'data', label: 'Wife', recipient: '08051112222', network: 'glo' }),
    );
    // The same number in another shape is the same recipient.
    const again = ok(
      await save(world, user, {
        service: 'data',
        label: 'My line',
        recipient: '+2348031112222',
        network: 'airtel',
      }),
    );
    assert.equal(again.id, first.id);
    assert.equal(again.createdAt, first.createdAt);
    assert.deepEqual({ label: again.label, network: again.network }, { label: 'My line', network: 'airtel' });
    // Now the most recently saved, and still two.
    assert.deepEqual(
      (await list(world, user)).map((b) => [b.id, b.label]),
      [
        [first.id, 'My line'],
        [other.id, 'Wife'],
      ],
    );
    // The same recipient under another service is another beneficiary.
    const airtime = ok(
      await save(world, user, { service: 'airtime', label: 'Me', recipient: '08031112222' }),
    );
    assert.notEqual(airtime.id, first.id);
    assert.equal((await list(world, user)).length, 3);
  });

  it('deletes one of yours; another user sees none of yours and cannot delete them', async () => {
    const owner = await signIn(world);
    const stranger = await signIn(world);
    const saved = ok(
      await save(world, owner, { service: 'airtime', label: 'Dad', recipient: '08071234567' }),
    );
    assert.deepEqual(await list(world, stranger), []);
    expectError(await remove(world, stranger, saved.id), 404, 'NOT_FOUND');
    expectError(await remove(world, owner, randomUUID()), 404, 'NOT_FOUND');
    assert.deepEqual(await list(world, owner), [saved]);
    assert.deepEqual(ok(await remove(world, owner, saved.id)), { id: saved.id });
    assert.deepEqual(await list(world, owner), []);
    expectError(await remove(world, owner, saved.id), 404, 'NOT_FOUND');
  });

  it('refuses bad input with 400 naming the field, and keeps nothing', async () => {
    const user = await signIn(world);
    const valid = { service: 'airtime', label: 'Mum', recipient: '08031234567' };
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, service: 'lottery' }, 'data.service'],
      [{ ...valid, label: '   ' }, 'data.label'],
      [{ ...valid, label: 'x'.repeat(41) }, 'data.label'],
      [{ ...valid, recipient: '12345' }, 'data.recipient'],
      [{ ...valid, recipient: '+14155550100' }, 'data.recipient'],
      [{ ...valid, network: 'vodafone' }, 'data.network'],
      [{ ...valid, service: 'transfer', network: 'mtn' }, 'data.network'],
      [{ ...valid, service: 'electricity', recipient: '0803123456x' }, 'data.recipient'],
      [{ ...valid, service: 'electricity', recipient: '123' }, 'data.recipient'],
      [{ ...valid, service: 'cable', recipient: 'IUC-1234567' }, 'data.recipient'],
      [{ ...valid, service: 'betting', recipient: 'a b c d' }, 'data.recipient'],
      [{ ...valid, service: 'education', recipient: '45001234567' }, 'data.recipient'],
      [{ ...valid, details: { disco: 7 } }, 'data.details.disco'],
      [{ ...valid, details: { nested: { a: 'b' } } }, 'data.details.nested'],
      [{ ...valid, details: { note: 'x'.repeat(101) } }, 'data.details.note'],
      [
        { ...valid, details: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, 'v'])) },
        'data.details',
      ],
      [{ ...valid, details: ['a'] }, 'data.details'],
      [{ ...valid, extra: 1 }, 'data.extra'],
    ];
    for (const [data, path] of refused) {
      expectValidationAt(await save(world, user, data), path);
    }
    expectValidationAt(
      await get(world, 'listBeneficiaries', { service: 'lottery' }, { token: user.accessToken }),
      'query.service',
    );
    expectValidationAt(await remove(world, user, 'not-a-uuid'), 'data.id');
    assert.deepEqual(await list(world, user), []);
  });

  it('needs a signed-in caller', async () => {
    expectError(await get(world, 'listBeneficiaries'), 401, 'UNAUTHENTICATED');
    expectError(
      await post(world, 'saveBeneficiary', { service: 'airtime', label: 'Mum', recipient: '08031234567' }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it('keeps at most 100: the 101st new one is refused, an update at 100 still works', async () => {
    const user = await signIn(world);
    const saved: BeneficiaryView[] = [];
    for (let i = 0; i < 100; i++) {
      saved.push(
        ok(await save(world, user, { service: 'electricity', label: `Meter ${i}`, recipient: meter() })),
      );
    }
    const refusal = expectError(
      await save(world, user, { service: 'electricity', label: 'One more', recipient: meter() }),
      422,
      'ABOVE_MAXIMUM',
    );
    assert.deepEqual(refusal.details, { limit: 100, unit: 'count' });
    assert.equal((await list(world, user)).length, 100);
    // Saving one already kept is an update, not a new one.
    const renamed = ok(
      await save(world, user, { service: 'electricity', label: 'Shop', recipient: saved[0]!.recipient }),
    );
    assert.equal(renamed.id, saved[0]!.id);
    assert.equal((await list(world, user))[0]!.label, 'Shop');
    // A delete makes room again.
    ok(await remove(world, user, saved[1]!.id));
    ok(await save(world, user, { service: 'electricity', label: 'One more', recipient: meter() }));
    assert.equal((await list(world, user)).length, 100);
  });
});
