import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, post, type SignedIn, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { checkout } from '../payments/helpers.ts';
import {
  assertLedgerOk,
  chargeSuccess,
  createIntent,
  creditPostings,
  type Intent,
  sendWebhook,
  setWebhookMode,
  verify,
  walletKobo,
} from './support.ts';

// Transactions that credit many wallets (a webhook batch of up to a hundred top-ups) race
// transactions that credit one (verifyTopup, reconciliation) for the same users. Every one takes
// its ledger locks in the one global order (the users' accounts, then the system accounts such as
// the collections pool), so none waits for a lock while holding one the other waits for: no
// deadlock aborts either side, no client sees a 5xx, and every top-up is credited once. PGlite runs
// one transaction at a time, so this proves something only on PostgreSQL.

const users = 30;
const rounds = 3;
const topupNaira = 1_000;

describe('ledger lock order under racing credits', {
  skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite runs one transaction at a time',
}, () => {
  const logLines: string[] = [];
  let world: World;
  let admin: SignedIn;
  let people: SignedIn[];

  before(async () => {
    const adminPhone = uniquePhone();
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone }, logger });
    admin = await signIn(world, adminPhone);
    people = await Promise.all(Array.from({ length: users }, () => signIn(world)));
  });
  after(() => world?.close());

  it('webhook batches, verifyTopup and reconciliation for the same users: no deadlock, no 5xx, each top-up credited once', async () => {
    for (let round = 0; round < rounds; round++) {
      // Per user: one top-up whose webhook arrives, one the user verifies, one reconciliation finds.
      const byWebhook = await Promise.all(people.map((p) => createIntent(world, p, topupNaira)));
      const byVerify = await Promise.all(people.map((p) => createIntent(world, p, topupNaira)));
      const byReconcile = await Promise.all(people.map((p) => createIntent(world, p, topupNaira)));
      await setWebhookMode(world, 'drop');
      try {
        for (const intent of [...byVerify, ...byReconcile]) await checkout(intent.checkoutUrl, 'pay');
      } finally {
        await setWebhookMode(world, 'deliver');
      }
      // Reconciliation re-verifies only top-ups left pending for a minute.
      world.ctx.sandboxClock!.advance(61);
      const wallets = await Promise.all(people.map((p) => walletKobo(world, p.userId)));

      const [webhooks, verifies, reconciles] = await Promise.all([
        Promise.all(
          byWebhook.map((intent) => sendWebhook(world, chargeSuccess(intent.reference, topupNaira * 100))),
        ),
        Promise.all(byVerify.map((intent, i) => verify(world, people[i]!, intent.reference))),
        Promise.all([1, 2].map(() => post(world, 'adminReconcile', {}, { token: admin.accessToken }))),
      ]);
      assert.deepEqual(new Set(webhooks.map((w) => w.status)), new Set([200]));
      // Named first: the cause, where the 5xx below is its symptom.
      assert.deepEqual(
        logLines.filter((line) => /deadlock/i.test(line)).map((line) => line.slice(0, 300)),
        [],
        'a transaction was aborted by a deadlock',
      );
      assert.deepEqual(
        verifies.filter((v) => v.status !== 200).map((v) => v.body),
        [],
        'verifyTopup answered an error',
      );
      assert.deepEqual(
        reconciles.filter((r) => r.status !== 200).map((r) => r.body),
        [],
        'adminReconcile answered an error',
      );
      await world.ctx.modules.funding.api.paymentEvents.drainNow();
      await world.ctx.jobs.runNow(paymentWebhookSweepJob);
      await post(world, 'adminReconcile', {}, { token: admin.accessToken });

      const all: Intent[] = [...byWebhook, ...byVerify, ...byReconcile];
      const postings = await Promise.all(all.map((intent) => creditPostings(world, intent.reference)));
      const kinds = ['webhook', 'verify', 'reconcile'];
      assert.deepEqual(
        all.flatMap((intent, i) =>
          postings[i] === 1 ? [] : [`${kinds[Math.floor(i / users)]} ${intent.reference}: ${postings[i]}`],
        ),
        [],
        'each top-up credited exactly once',
      );
      for (const [i, person] of people.entries()) {
        assert.equal(await walletKobo(world, person.userId), wallets[i]! + 3n * BigInt(topupNaira * 100));
      }
    }
    await assertLedgerOk(world);
  });
});
