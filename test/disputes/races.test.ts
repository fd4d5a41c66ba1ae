import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  type ApiResponse,
  createWorld,
  ok,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { buyer } from '../vtu/purchase-support.ts';
import { airtime, balance, myDisputes, report, resolve, walletHistory } from './support.ts';

// Races of disputes. PGlite runs one transaction at a time, so there these prove the rules only in
// sequence; on PostgreSQL the requests overlap for real, split across two services on one database
// (two processes' pools): one open dispute per movement holds only if the unique index decides it,
// and a refund happens once only if the dispute is decided under its lock.

async function services(env: Record<string, string>): Promise<World[]> {
  const world = await createWorld({ env });
  if (!onPostgres()) return [world];
  return [world, await createWorld({ env, sameDatabaseAs: world })];
}

function concurrently(
  worlds: World[],
  count: number,
  send: (world: World, i: number) => Promise<ApiResponse>,
) {
  return Promise.all(Array.from({ length: count }, (_, i) => send(worlds[i % worlds.length]!, i)));
}

function assertNoServerErrors(answers: ApiResponse[]): void {
  assert.deepEqual(
    answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
    [],
    'no request may answer 5xx',
  );
}

describe(`dispute races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhones = [uniquePhone(), uniquePhone()];
  let worlds: World[];
  let world: World;
  let admins: SignedIn[];
  before(async () => {
    worlds = await services({ ADMIN_PHONES: adminPhones.join(',') });
    world = worlds[0]!;
    admins = [await signIn(world, adminPhones[0]), await signIn(world, adminPhones[1])];
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  it('20 reports of one purchase at once: exactly one dispute opens, 19 get 409 CONFLICT', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    const [debit] = await walletHistory(world, user);
    // Half by the purchase's reference, half by its wallet movement's: both name the purchase.
    const answers = await concurrently(worlds, 20, (w, i) =>
      report(w, user, i % 4 < 2 ? purchase.reference : debit!.reference),
    );
    assertNoServerErrors(answers);
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    const mine = await myDisputes(world, user);
    assert.deepEqual(
      mine.items.map((d) => [d.reference, d.status]),
      [[purchase.reference, 'open']],
    );
  });

  it('two operators refunding one dispute at once, ten times each: the wallet is credited once', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    const before = await balance(world, user);
    const opened = ok(await report(world, user, purchase.reference));
    const answers = await concurrently(worlds, 20, (w, i) =>
      resolve(w, admins[i % 2]!, opened.id, i % 3 === 0 ? 'decline' : 'refund'),
    );
    assertNoServerErrors(answers);
    const won = answers.filter((a) => a.status === 200);
    assert.equal(won.length, 1, 'one resolution wins');
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    const [dispute] = (await myDisputes(world, user)).items;
    const refunded = dispute?.status === 'refunded' ? purchase.amount : 0;
    assert.equal(await balance(world, user), before + refunded);
    assert.equal((await walletHistory(world, user, { kind: 'dispute_refund' })).length, refunded > 0 ? 1 : 0);
    await assertLedgerOk(world);
  });

  it('refunds only, from both services: exactly one posting of the whole amount', async () => {
    const user = await buyer(world, 2_000);
    const purchase = await airtime(world, user, '0');
    const before = await balance(world, user);
    const opened = ok(await report(world, user, purchase.reference));
    const answers = await concurrently(worlds, 20, (w, i) => resolve(w, admins[i % 2]!, opened.id, 'refund'));
    assertNoServerErrors(answers);
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    assert.equal(await balance(world, user), before + purchase.amount);
    assert.deepEqual(
      (await walletHistory(world, user, { kind: 'dispute_refund' })).map((e) => e.amount),
      [purchase.amount],
    );
    await assertLedgerOk(world);
  });
});
