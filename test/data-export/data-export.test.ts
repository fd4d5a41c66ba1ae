import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dataExportBuildJob } from '../../src/data-export/service.ts';
import { advanceClock, e164 } from '../auth/support.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, failure, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { member, transferCall } from '../transfers/support.ts';
import { bought, mtn, PIN } from '../vtu/purchase-support.ts';

// The data export (API.md 17.3) over HTTP: a person asks for a copy of their data, a job builds one
// JSON file, they are told, and getDataExport hands a URL signed for at most 10 minutes that serves
// it while it is kept (7 days, the sandbox clock moved forward, no sleeps). The file holds the
// person's own records and nothing of the other person of a transfer but the masked name they saw.

type ExportView = { id: string; status: 'preparing' | 'ready' | 'expired'; url?: string; expiresAt?: string };
type Inbox = { items: Array<{ kind: string; title: string; data: Record<string, unknown> }> };

describe('data export', () => {
  let world: World;
  let person: SignedIn;
  let other: SignedIn;
  let exportId: string;
  let file: Record<string, unknown>;
  let fileText: string;

  const viewOf = async (user: SignedIn, id: string) =>
    ok(await get<ExportView>(world, 'getDataExport', { id }, { token: user.accessToken }));

  before(async () => {
    world = await createWorld();
    // The person: Tier 2 (transfers), a PIN, a funded wallet, then one of each thing the file holds.
    person = await member(world, 2, 20_000);
    // The other person of the transfer, with a name of their own, Tier 1 (to receive).
    other = await userAtTier(
      world,
      1,
      await kycUser(world, { firstName: 'Chiamaka', lastName: 'Nwachukwu' }),
    );
    await bought(world, person, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 });
    ok(await transferCall(world, person, other, 1_500, { narration: 'for the market' }));
    ok(await post(world, 'createSavingsLock', { amount: 2_000, days: 30 }, { token: person.accessToken }));
    ok(
      await post(
        world,
        'saveBeneficiary',
        { service: 'airtime', label: 'Mum', recipient: mtn('7'), network: 'mtn' },
        { token: person.accessToken },
      ),
    );
    await runDomainEvents(world);
  });

  after(async () => {
    await world?.close();
  });

  it('is prepared by a job, the person is told, and the URL downloads one JSON file of their data', async () => {
    const asked = ok(await post<ExportView>(world, 'requestDataExport', {}, { token: person.accessToken }));
    assert.equal(asked.status, 'preparing');
    exportId = asked.id;
    assert.deepEqual(await viewOf(person, exportId), { id: exportId, status: 'preparing' });

    const { done, failed } = await runQueuedJobs(world, dataExportBuildJob);
    assert.deepEqual(failed, []);
    assert.deepEqual(done, [{ exportId }]);
    // A job run again (a retry after a crash) builds and announces nothing more.
    await world.ctx.jobs.runNow(dataExportBuildJob, { exportId });
    await runDomainEvents(world);
    const inbox = ok(await get<Inbox>(world, 'listNotifications', {}, { token: person.accessToken }));
    const told = inbox.items.filter((n) => n.kind === 'data_export_ready');
    assert.equal(told.length, 1, 'told once that the export is ready');
    assert.equal(told[0]!.data.exportId, exportId);

    const ready = await viewOf(person, exportId);
    assert.equal(ready.status, 'ready');
    const now = world.ctx.clock.now().getTime();
    assert.ok(ready.expiresAt !== undefined);
    const keptMs = new Date(ready.expiresAt).getTime() - now;
    assert.ok(keptMs > 7 * 86_400_000 - 60_000 && keptMs <= 7 * 86_400_000, 'kept 7 days');
    const url = new URL(ready.url!);
    const urlLifeSeconds = Number(url.searchParams.get('expires')) - now / 1000;
    assert.ok(
      urlLifeSeconds > 0 && urlLifeSeconds <= 600,
      `the URL lives at most 10 minutes (${urlLifeSeconds} s)`,
    );

    const response = await fetch(ready.url!);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.match(
      response.headers.get('content-disposition') ?? '',
      /^attachment; filename="billrail-data-.*\.json"$/,
    );
    assert.match(response.headers.get('cache-control') ?? '', /no-store/);
    fileText = await response.text();
    file = JSON.parse(fileText) as Record<string, unknown>;
  });

  it("holds every section of the person's data", () => {
    const profile = file.profile as Record<string, unknown>;
    assert.equal(profile.id, person.userId);
    assert.equal(profile.phone, e164(person.phone));
    const kyc = file.kyc as { tier: number; submissions: Array<Record<string, unknown>> };
    assert.equal(kyc.tier, 2);
    assert.deepEqual(
      kyc.submissions.map((s) => [s.tier, s.status]),
      [
        [1, 'approved'],
        [2, 'approved'],
      ],
    );
    const wallet = file.wallet as {
      balances: Record<string, unknown>;
      movements: Array<Record<string, unknown>>;
    };
    const kinds = wallet.movements.map((m) => m.kind);
    for (const kind of ['purchase', 'transfer_out', 'savings_lock']) {
      assert.ok(kinds.includes(kind), `the wallet's movements include a ${kind} (${kinds.join(', ')})`);
    }
    const purchases = file.purchases as Array<Record<string, unknown>>;
    assert.equal(purchases.length, 1);
    assert.equal(purchases[0]!.service, 'airtime');
    assert.equal((file.savings as unknown[]).length, 1);
    assert.deepEqual(
      (file.beneficiaries as Array<Record<string, unknown>>).map((b) => b.label),
      ['Mum'],
    );
    const rewards = file.rewards as Record<string, unknown>;
    assert.ok('checkin' in rewards && 'referral' in rewards && 'milestones' in rewards);
    const notifications = file.notifications as { inbox: unknown[]; settings: unknown };
    assert.ok(notifications.inbox.length > 0, 'the inbox is in the file');
    for (const section of ['schedules', 'bulkOrders', 'disputes']) {
      assert.ok(Array.isArray(file[section]), `${section} is a list`);
    }
    assert.ok(Array.isArray((file.devices as Record<string, unknown>).pushSubscriptions));
  });

  it('shows the other person of a transfer only by the masked name they saw', () => {
    const wallet = file.wallet as { movements: Array<Record<string, unknown>> };
    const transfer = wallet.movements.find((m) => m.kind === 'transfer_out');
    assert.ok(transfer !== undefined);
    assert.match(JSON.stringify(transfer), /Chiamaka N\./);
    const theirPhone = e164(other.phone);
    for (const theirs of [
      other.userId,
      theirPhone,
      theirPhone.slice(1),
      other.phone,
      other.phone.slice(1),
      'Nwachukwu',
    ]) {
      assert.ok(!fileText.includes(theirs), `the file holds nothing of the other person: ${theirs}`);
    }
    // No secret of the person either.
    for (const secret of ['pin_hash', PIN, 'p256dh', 'accessToken', 'refreshToken']) {
      assert.ok(!fileText.includes(`"${secret}`), `no ${secret} in the file`);
    }
  });

  it('is refused a second time within 24 hours, saying when the next may be asked for', async () => {
    const refused = failure(await post(world, 'requestDataExport', {}, { token: person.accessToken }));
    assert.equal(refused.status, 409);
    assert.equal(refused.code, 'CONFLICT');
    const details = refused.details as { nextAllowedAt: string; exportId: string };
    assert.ok(refused.message.includes(details.nextAllowedAt));
    // It names the copy already asked for, so a phone that never saw it (another device) can show it.
    const copy = ok(
      await get<ExportView>(world, 'getDataExport', { id: details.exportId }, { token: person.accessToken }),
    );
    assert.equal(copy.status, 'ready');
  });

  it('makes one export of requests sent at once (the person locked; proved on PostgreSQL)', async () => {
    const racer = await signIn(world);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post(world, 'requestDataExport', {}, { token: racer.accessToken })),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409]);
    const rows = await world.ctx.db
      .selectFrom('data_exports')
      .select('id')
      .where('user_id', '=', racer.userId)
      .execute();
    assert.equal(rows.length, 1);
  });

  it("is 404 for another person's export", async () => {
    const refused = failure(
      await get(world, 'getDataExport', { id: exportId }, { token: other.accessToken }),
    );
    assert.equal(refused.status, 404);
    assert.equal(refused.code, 'NOT_FOUND');
  });

  it('refuses a forged, stretched or expired URL', async () => {
    const { url } = await viewOf(person, exportId);
    const signed = new URL(url!);
    const expectRefused = async (target: URL | string, status: number) => {
      const response = await fetch(target);
      assert.equal(response.status, status, String(target));
      const body = (await response.json()) as { success: boolean; error: { code: string } };
      assert.equal(body.success, false);
      assert.equal(body.error.code, status === 403 ? 'FORBIDDEN' : 'NOT_FOUND');
    };
    const forged = new URL(signed);
    const signature = forged.searchParams.get('signature')!;
    forged.searchParams.set('signature', `${signature[0] === 'a' ? 'b' : 'a'}${signature.slice(1)}`);
    await expectRefused(forged, 403);
    const stretched = new URL(signed);
    stretched.searchParams.set('expires', String(Number(signed.searchParams.get('expires')) + 3600));
    await expectRefused(stretched, 403);
    await expectRefused(`${world.baseUrl}/data-exports/${exportId}`, 403);
    await expectRefused(`${world.baseUrl}/data-exports/not-an-id?expires=1&signature=00`, 404);
    // Another export's id under this signature is refused too: the signature is of the id.
    const otherId = new URL(signed);
    otherId.pathname = '/data-exports/00000000-0000-7000-8000-000000000000';
    await expectRefused(otherId, 403);

    await advanceClock(world, 601);
    await expectRefused(signed, 403);
    // A fresh URL still works while the file is kept.
    const fresh = await viewOf(person, exportId);
    assert.equal((await fetch(fresh.url!)).status, 200);
  });

  it('is deleted after 7 days: expired, and its URL refused', async () => {
    const { url } = await viewOf(person, exportId);
    await advanceClock(world, 7 * 86_400);
    // The session ended with the days gone: the person signs in again.
    person = { ...person, ...(await signIn(world, person.phone)) };
    assert.deepEqual(await viewOf(person, exportId), { id: exportId, status: 'expired' });
    const row = await world.ctx.db
      .selectFrom('data_exports')
      .select(['status', 'content'])
      .where('id', '=', exportId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'expired', content: null }, 'the sweep deleted the file');
    const response = await fetch(url!);
    assert.ok(response.status === 403 || response.status === 404);
    // A day later than the first, another copy may be asked for.
    const again = ok(await post<ExportView>(world, 'requestDataExport', {}, { token: person.accessToken }));
    assert.equal(again.status, 'preparing');
    await runQueuedJobs(world, dataExportBuildJob);
  });
});
