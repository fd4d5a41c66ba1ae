import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { koboToNaira } from '../../src/money.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import type {
  ReconciliationItemView,
  ReconciliationWithItemsView,
} from '../../src/reconciliation/schemas.ts';
import { loadSandboxEnv } from '../../src/sandbox/env.ts';
import { buildStandaloneSandbox, type StandaloneSandbox } from '../../src/sandbox/server.ts';
import {
  assertLedgerOk,
  createIntent,
  creditPostings,
  processed,
  sendWebhook,
  verify,
  walletKobo,
  webhookPath,
} from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { freePort } from '../helpers/free-port.ts';
import { restoreInto } from '../helpers/pg-restore.ts';
import { createWorld, get, ok, post, type SignedIn, uniquePhone, type World } from '../helpers/world.ts';
import { expectError, matchingNin } from '../kyc/kyc-support.ts';
import { checkout } from '../payments/helpers.ts';
import { signInThrough, vapidKeys } from '../sandbox/support.ts';
import { bought, PIN } from '../vtu/purchase-support.ts';

// The restore drill of docs/operations.md ("After a database restore"), on PostgreSQL: people fund
// their wallets and buy, a backup is taken (pg_dump), more money moves, and the database is restored
// from the backup into a new one under a new service. The reconciliation with the providers' records
// (API.md 17.5) then finds what the restore lost: every payment the provider took since the backup
// is missingHere and is credited once; every data order the vendor took since the backup is
// missingHere, its debit gone, and is settled by an operator's adjustment (four eyes) or absorbed.
//
// The providers must outlive the service, as the real ones do: the sandbox runs here as the
// standalone sandbox (src/sandbox/server.ts, what `npm run sandbox` serves) on a port of its own, and
// both services reach it over HTTP (SANDBOX_URL), so the service before the restore is stopped whole
// (closed) while the provider's records stay. The sandbox's webhooks go to whichever service is
// current (state.payments.webhookUrlOverride: the provider's webhook URL is the public address the
// new service now answers at). Its clock is never moved, so its clock-jobs URL points nowhere.

const run = promisify(execFile);

type Run = ReconciliationWithItemsView;

const e164 = (phone: string) => `+234${phone.slice(1)}`;
/** A phone of our own ending in `digit`: the sandbox providers decide an order's outcome by it. */
const phoneEndingIn = (digit: string) => `${uniquePhone().slice(0, -1)}${digit}`;
const kobo = (naira: number) => BigInt(naira) * 100n;

describe('the restore drill: a backup restored under a new service, reconciled with the providers', {
  skip: !onPostgres() && 'PostgreSQL only: pg_dump and pg_restore (set DATABASE_URL to run it)',
}, () => {
  let sandbox: StandaloneSandbox;
  let original: World | undefined;
  let restored: World | undefined;
  let dumpDir: string;
  const restoredName = `billrail_drill_${randomBytes(6).toString('hex')}`;
  const adminPhones = [uniquePhone(), uniquePhone()];
  const keys = vapidKeys();
  const clockToken = randomBytes(24).toString('base64url');

  before(async () => {
    const port = await freePort();
    const env = loadSandboxEnv({
      PORT: String(port),
      // Never called: the sandbox clock is not moved, and webhooks go to webhookUrlOverride.
      SERVICE_URL: 'http://127.0.0.1:9',
      SANDBOX_CLOCK_TOKEN: clockToken,
      VAPID_PUBLIC_KEY: keys.publicKey,
    });
    sandbox = buildStandaloneSandbox(env, pino({ level: 'silent' }));
    await sandbox.app.listen({ port, host: '127.0.0.1' });
    dumpDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-drill-'));
  });
  after(async () => {
    await original?.close();
    await restored?.close();
    await sandbox?.app.close();
    if (dumpDir !== undefined) await rm(dumpDir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`drop database if exists ${restoredName} with (force)`);
    } finally {
      await admin.end();
    }
  });

  /** A service on the shared sandbox; on `database` when given (the restored one), else a fresh one. */
  async function service(database?: string): Promise<World> {
    const world = await createWorld({
      env: {
        SANDBOX_URL: sandbox.baseUrl,
        SANDBOX_CLOCK_TOKEN: clockToken,
        VAPID_PUBLIC_KEY: keys.publicKey,
        VAPID_PRIVATE_KEY: keys.privateKey,
        ADMIN_PHONES: adminPhones.map(e164).join(','),
      },
      ...(database === undefined ? {} : { database: { kind: 'postgres', url: database, poolMax: 10 } }),
    });
    // The provider's webhooks go to the service that now answers.
    sandbox.state.payments.webhookUrlOverride = `${world.baseUrl}${webhookPath}`;
    return world;
  }

  /** A person with a PIN at Tier 1, or at Tier 2 (NIN verified: a dedicated account is theirs to ask). */
  async function person(world: World, tier: 1 | 2, phone = uniquePhone()): Promise<SignedIn> {
    const user = await signInThrough(world, sandbox, phone);
    const auth = { token: user.accessToken };
    ok(await post(world, 'updateProfile', { firstName: 'Adaeze', lastName: 'Okafor' }, auth));
    ok(await post(world, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, auth));
    if (tier === 2) {
      const submitted = ok(
        await post<{ status: string }>(world, 'submitKycTier2', { nin: matchingNin(), phone }, auth),
      );
      assert.equal(submitted.status, 'approved');
    }
    ok(await post(world, 'setTransactionPin', { pin: PIN }, auth));
    return user;
  }

  /** Waits for the sandbox's webhook about `reference` to be delivered, then for its processing. */
  async function webhookProcessed(world: World, reference: string): Promise<void> {
    const delivery = sandbox.state.payments.webhookDeliveries.find(
      (d) => d.event === 'charge.success' && d.reference === reference,
    );
    assert.ok(delivery, `a charge.success for ${reference}`);
    await delivery.settled;
    assert.equal(delivery.status, 'delivered');
    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
  }

  /** A top-up paid at the sandbox checkout, its webhook delivered and credited; the reference. */
  async function paidTopup(world: World, user: SignedIn, naira: number): Promise<string> {
    const intent = await createIntent(world, user, naira);
    await checkout(intent.checkoutUrl, 'pay');
    await webhookProcessed(world, intent.reference);
    assert.equal(await creditPostings(world, intent.reference), 1, 'the top-up was credited');
    return intent.reference;
  }

  /** A bank transfer into a dedicated account at the sandbox bank, credited by its webhook. */
  async function bankTransfer(world: World, accountNumber: string, naira: number): Promise<string> {
    const response = await fetch(`${sandbox.baseUrl}/__sandbox/bank-transfer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber, amount: naira }),
    });
    assert.equal(response.status, 200);
    const { data } = (await response.json()) as { data: { reference: string } };
    await webhookProcessed(world, data.reference);
    return data.reference;
  }

  /** The charge.success the provider sent (and would send again) for a paid reference. */
  async function chargeSuccessOf(reference: string): Promise<string> {
    const response = await fetch(
      `${sandbox.baseUrl}/__sandbox/payments/transaction/verify/${encodeURIComponent(reference)}`,
      { headers: { authorization: `Bearer ${restored!.ctx.config.secrets.paymentSigning}` } },
    );
    assert.equal(response.status, 200);
    const { data } = (await response.json()) as { data: unknown };
    return JSON.stringify({ event: 'charge.success', data });
  }

  async function dataPlan(world: World): Promise<{ planId: string; naira: number }> {
    const plan = (await world.ctx.vtuProviders.data.dataPlans('mtn'))[0]!;
    return { planId: plan.planId, naira: koboToNaira(plan.wholesaleKobo) };
  }

  async function buyData(world: World, user: SignedIn, phone: string) {
    const plan = await dataPlan(world);
    const purchase = await bought(world, user, 'buyData', {
      network: 'mtn',
      plan_id: plan.planId,
      phone,
      amount: plan.naira,
    });
    assert.equal(purchase.status, 'success', 'the vendor delivered the data');
    return purchase;
  }

  async function buyAirtime(world: World, user: SignedIn, naira: number) {
    const purchase = await bought(world, user, 'buyAirtime', {
      network: 'mtn',
      phone: phoneEndingIn('5'),
      amount: naira,
    });
    assert.equal(purchase.status, 'success', 'the airtime was delivered');
    return purchase;
  }

  async function reconcile(world: World, admin: SignedIn, source: string, from: Date): Promise<Run> {
    // To a minute past now: the gap is from the backup to the restored service's start, and beyond.
    const to = new Date(world.ctx.clock.now().getTime() + 60_000);
    const started = ok(
      await post<Run>(
        world,
        'adminRunReconciliation',
        { source, from: from.toISOString(), to: to.toISOString() },
        { token: admin.accessToken },
      ),
    );
    const { failed } = await runQueuedJobs(world, reconciliationRunJob);
    assert.deepEqual(failed, []);
    const done = ok(
      await get<Run>(
        world,
        'adminGetReconciliation',
        { id: started.id, limit: 100 },
        { token: admin.accessToken },
      ),
    );
    assert.equal(done.status, 'done');
    return done;
  }

  it('credits each payment of the gap once, and lists the data orders whose debit it lost', {
    timeout: 300_000,
  }, async () => {
    // 1. Before the backup: two operators, Ada (Tier 1, buys for her own phone) and Bayo (Tier 2,
    // with a dedicated account), funded at the checkout, buying data and airtime.
    const first = await service();
    original = first;
    const [adminA, adminB] = [
      await signInThrough(first, sandbox, adminPhones[0]),
      await signInThrough(first, sandbox, adminPhones[1]),
    ];
    const ada = await person(first, 1, phoneEndingIn('5'));
    const bayo = await person(first, 2);
    const account = ok(
      await post<{ accountNumber: string }>(
        first,
        'requestDedicatedAccount',
        {},
        { token: bayo.accessToken },
      ),
    );
    const plan = await dataPlan(first);
    const early = {
      adaTopup: await paidTopup(first, ada, 5_000),
      adaData: await buyData(first, ada, ada.phone),
      adaAirtime: await buyAirtime(first, ada, 100),
      bayoTopup: await paidTopup(first, bayo, 3_000),
    };
    const atBackup = {
      ada: kobo(5_000 - plan.naira - 100),
      bayo: kobo(3_000),
    };
    assert.equal(await walletKobo(first, ada.userId), atBackup.ada);

    // 2. The backup. The gap is compared from an hour before it, as the runbook says: what the
    // restored database holds is found matched.
    const from = new Date(sandbox.clock.now().getTime() - 3_600_000);
    const dump = path.join(dumpDir, 'billrail.dump');
    const sourceUrl = first.ctx.database.url!;
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, sourceUrl]);

    // 3. After it: top-ups paid and credited, a bank transfer credited, data and airtime delivered.
    const adaTopup = await paidTopup(first, ada, 2_000);
    const adaData = await buyData(first, ada, ada.phone);
    const adaAirtime = await buyAirtime(first, ada, 200);
    const bayoTopup = await paidTopup(first, bayo, 1_500);
    const bayoDeposit = await bankTransfer(first, account.accountNumber, 4_000);
    const bayoData = await buyData(first, bayo, phoneEndingIn('5'));
    const truth = {
      ada: atBackup.ada + kobo(2_000 - plan.naira - 200),
      bayo: atBackup.bayo + kobo(1_500 + 4_000 - plan.naira),
    };
    assert.equal(await walletKobo(first, ada.userId), truth.ada);
    assert.equal(await walletKobo(first, bayo.userId), truth.bayo);

    // 4. The service stops; the backup is restored into a new database; a new service (which
    // migrates on start) runs on it, with the same providers.
    await first.close();
    original = undefined;
    const restoredUrl = new URL(await restoreInto(sourceUrl, restoredName, dump));
    const world = await service(restoredUrl.toString());
    restored = world;
    await assertLedgerOk(world);
    assert.equal(await walletKobo(world, ada.userId), atBackup.ada, 'the wallets are as at the backup');
    assert.equal(await walletKobo(world, bayo.userId), atBackup.bayo);

    // The provider retries a webhook of the gap now: its intent is gone, so it credits nothing,
    // and does not stand in the way of the credit below.
    const retried = await sendWebhook(world, await chargeSuccessOf(adaTopup));
    assert.equal(retried.status, 200);
    assert.equal((await processed(world, await chargeSuccessOf(adaTopup))).outcome, 'unknown_reference');
    assert.equal(await walletKobo(world, ada.userId), atBackup.ada);

    // 5. The payments' reconciliation over the gap: every payment the provider took is missingHere.
    const payments = await reconcile(world, adminA, 'payments', from);
    assert.deepEqual(Object.fromEntries(payments.items.map((i) => [i.reference, i.bucket])), {
      [early.adaTopup]: 'matched',
      [early.bayoTopup]: 'matched',
      [adaTopup]: 'missingHere',
      [bayoTopup]: 'missingHere',
      [bayoDeposit]: 'missingHere',
    });
    const byReference = new Map(payments.items.map((i) => [i.reference, i]));
    assert.deepEqual(
      [adaTopup, bayoTopup, bayoDeposit].map((r) => [
        byReference.get(r)?.theirs?.amount,
        byReference.get(r)?.ours,
      ]),
      [
        [2_000, undefined],
        [1_500, undefined],
        [4_000, undefined],
      ],
    );
    assert.equal(byReference.get(adaTopup)?.theirs?.userId, ada.userId, "the checkout's payer");

    const credit = (id: string) =>
      post<ReconciliationItemView>(
        world,
        'adminResolveReconciliationItem',
        { id, action: 'credit', reason: 'paid after the backup of the restore drill' },
        { token: adminA.accessToken },
      );
    for (const reference of [adaTopup, bayoTopup, bayoDeposit]) {
      const item = byReference.get(reference)!;
      assert.equal(ok(await credit(item.id)).resolution?.outcome, 'credited');
      const again = expectError(await credit(item.id), 409, 'CONFLICT');
      assert.equal(again.details?.reason, 'already_resolved');
      // A late re-delivery of the same charge changes nothing.
      const late = await chargeSuccessOf(reference);
      assert.equal((await sendWebhook(world, late)).status, 200);
      await processed(world, late);
    }
    // Ada asks about her top-up: credited, once.
    assert.equal(ok(await verify(world, ada, adaTopup)).credited, true);
    assert.equal(await creditPostings(world, adaTopup), 1);
    assert.equal(await creditPostings(world, bayoTopup), 1);
    // The operators' reconcile now (the five-minute job's run) finds nothing more to credit.
    ok(await post(world, 'adminReconcile', {}, { token: adminA.accessToken }));
    const credited = {
      ada: atBackup.ada + kobo(2_000),
      bayo: atBackup.bayo + kobo(1_500 + 4_000),
    };
    assert.equal(await walletKobo(world, ada.userId), credited.ada);
    assert.equal(await walletKobo(world, bayo.userId), credited.bayo);
    const again = await reconcile(world, adminA, 'payments', from);
    assert.deepEqual(again.counts, {
      matched: 5,
      missingHere: 0,
      missingThere: 0,
      amountMismatch: 0,
      statusMismatch: 0,
    });

    // The VTU reconciliations: the data vendor's own list shows the orders of the gap, which the
    // restored database does not hold; VTpass keeps no list, so the airtime of the gap is not seen.
    const data = await reconcile(world, adminA, 'data', from);
    assert.equal(data.providerList, true);
    assert.deepEqual(Object.fromEntries(data.items.map((i) => [i.reference, i.bucket])), {
      [early.adaData.reference]: 'matched',
      [adaData.reference]: 'missingHere',
      [bayoData.reference]: 'missingHere',
    });
    for (const item of data.items.filter((i) => i.bucket === 'missingHere')) {
      assert.equal(item.ours, undefined, 'its debit went with the restore');
      assert.deepEqual([item.theirs?.status, item.theirs?.amount], ['success', plan.naira]);
    }
    const bills = await reconcile(world, adminA, 'bills', from);
    assert.equal(bills.providerList, false);
    assert.deepEqual(
      bills.items.map((i) => [i.reference, i.bucket]),
      [[early.adaAirtime.reference, 'matched']],
      `the airtime ${adaAirtime.reference} of the gap is on VTpass's dashboard only`,
    );

    // Ada's data went to her own phone: the person is found by it, and an adjustment proposed by
    // one operator and approved by another debits what she was given. Bayo's went to a number
    // nobody here has: the team absorbs it. Each item records what was decided.
    const found = ok(
      await get<{ id: string }>(world, 'adminGetUser', { phone: ada.phone }, { token: adminA.accessToken }),
    );
    assert.equal(found.id, ada.userId);
    const proposed = ok(
      await post<{ id: string; status: string }>(
        world,
        'adminProposeAdjustment',
        {
          userId: ada.userId,
          direction: 'debit',
          amount: plan.naira,
          reason: `Data bought ${adaData.reference}, delivered; its payment was lost to a database restore`,
        },
        { token: adminA.accessToken },
      ),
    );
    expectError(
      await post(world, 'adminApproveAdjustment', { id: proposed.id }, { token: adminA.accessToken }),
      403,
      'FORBIDDEN',
    );
    ok(await post(world, 'adminApproveAdjustment', { id: proposed.id }, { token: adminB.accessToken }));
    const settle = (reference: string, reason: string) =>
      post<ReconciliationItemView>(
        world,
        'adminResolveReconciliationItem',
        { id: data.items.find((i) => i.reference === reference)!.id, action: 'ignore', reason },
        { token: adminA.accessToken },
      );
    ok(await settle(adaData.reference, `debited by adjustment ${proposed.id}`));
    ok(await settle(bayoData.reference, 'absorbed: the buyer cannot be told from the vendor record'));

    // What the drill leaves: Ada's wallet short of the truth by the airtime nobody could see.
    assert.equal(await walletKobo(world, ada.userId), truth.ada + kobo(200));
    assert.equal(await walletKobo(world, bayo.userId), truth.bayo + kobo(plan.naira));
    await assertLedgerOk(world);
  });
});
