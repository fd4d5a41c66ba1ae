import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { alertEmailJob, raiseAlert } from '../../src/alerts/alerts.ts';
import type { EmailMessage } from '../../src/providers/email/mailer.ts';
import type { SandboxEmail } from '../../src/sandbox/state.ts';

import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  get,
  ok,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { assertLedgerOk, BOUNDED, chargeSuccess, createIntent, processed, sendWebhook } from './support.ts';

// Operations alerts by email (API.md section 11, DESIGN.md jobs): raising an alert enqueues, in the
// same transaction, a job that emails OPS_EMAIL its kind, message and details. The sandbox's mailbox
// keeps what was sent, readable at GET /__sandbox/emails. Nothing here sleeps: the test waits on a
// promise that the mailer resolves when the worker has sent the message.

const OPS_EMAIL = 'ops@billrail.example';

async function mailbox(world: World, to: string): Promise<SandboxEmail[]> {
  const response = await fetch(`${world.baseUrl}/__sandbox/emails?to=${encodeURIComponent(to)}`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { success: boolean; data: SandboxEmail[] };
  assert.equal(body.success, true);
  return body.data;
}

/** A charge that paid ₦300 for a ₦500 intent: credited, with a topup_amount_mismatch alert. */
async function amountMismatch(world: World, user: SignedIn): Promise<string> {
  const intent = await createIntent(world, user, 500);
  const body = chargeSuccess(intent.reference, 30_000);
  assert.equal((await sendWebhook(world, body)).status, 200);
  assert.equal((await processed(world, body)).outcome, 'credited');
  return intent.reference;
}

async function alertsOf(world: World, admin: SignedIn, reference: string) {
  const page = ok(
    await get<{
      items: Array<{ id: string; kind: string; message: string; details: Record<string, unknown> }>;
    }>(world, 'adminListAlerts', { limit: 100 }, { token: admin.accessToken }),
  );
  return page.items.filter((a) => a.details.reference === reference);
}

describe(`alert email with OPS_EMAIL (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  const sent: EmailMessage[] = [];
  const waiters: Array<{ match: (m: EmailMessage) => boolean; resolve: (m: EmailMessage) => void }> = [];

  /** The first message sent that matches, once the worker's mailer has sent it. */
  function emailWhere(match: (m: EmailMessage) => boolean): Promise<EmailMessage> {
    const seen = sent.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ match, resolve }));
  }

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone, OPS_EMAIL } });
    // This wrapper tells the test once a send is done. Put on the mailer itself: the job's module
    // holds the mailer it was built with.
    const mailer = world.ctx.mailer;
    const realSend = mailer.send.bind(mailer);
    mailer.send = async (message) => {
      await realSend(message);
      sent.push(message);
      for (const w of waiters.filter((x) => x.match(message))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(message);
      }
    };
    await world.ctx.jobs.startWorkers();
  });
  after(() => world.close());

  it('an amount-mismatch webhook emails the alert to OPS_EMAIL', BOUNDED, async () => {
    const user = await signIn(world);
    const admin = await signIn(world, adminPhone);
    const reference = await amountMismatch(world, user);
    const [alert] = await alertsOf(world, admin, reference);
    assert.ok(alert !== undefined, 'the alert is stored and listed');

    await emailWhere((m) => m.text.includes(reference));
    const inbox = (await mailbox(world, OPS_EMAIL)).filter((e) => e.text.includes(reference));
    assert.equal(inbox.length, 1, 'one email for the alert');
    const email = inbox[0]!;
    assert.equal(email.to, OPS_EMAIL);
    assert.match(email.subject, /topup_amount_mismatch/);
    assert.equal(email.from, world.ctx.config.mail.from);
    assert.ok(email.text.includes(alert.message), 'the message is in the email');
    assert.ok(email.text.includes('expectedKobo: 50000'), 'the details are in the email');
    assert.ok(email.text.includes('paidKobo: 30000'));
    assert.ok(email.text.includes(alert.id));
    // Nobody else got it.
    assert.deepEqual(await mailbox(world, 'someone-else@billrail.example'), []);
    await assertLedgerOk(world);
  });

  it(
    'a transfer.failed for a reference never sent is listed and emailed once, naming both',
    BOUNDED,
    async () => {
      const admin = await signInAgain(world, adminPhone);
      const reference = `fund-not-ours-${process.pid}-${Date.now()}`;
      // The provider redelivers, and its bodies differ in their bytes (an id, a timestamp).
      for (const id of [1, 2]) {
        const body = JSON.stringify({
          event: 'transfer.failed',
          data: { id, reference, amount: 250_000, reason: 'float', gateway_response: 'Account blocked' },
        });
        assert.equal((await sendWebhook(world, body)).status, 200);
        assert.equal((await processed(world, body)).outcome, 'unknown_reference');
      }
      const alerts = await alertsOf(world, admin, reference);
      assert.equal(alerts.length, 1, 'one alert for the reference and event kind');
      const alert = alerts[0]!;
      assert.equal(alert.kind, 'transfer_unknown_reference');
      assert.equal(alert.details.event, 'transfer.failed');
      assert.match(alert.message, new RegExp(`transfer\\.failed.*${reference}`));

      const email = await emailWhere((m) => m.text.includes(reference));
      assert.equal(email.to, OPS_EMAIL);
      assert.match(email.subject, /transfer_unknown_reference/);
      assert.ok(email.text.includes('event: transfer.failed'), email.text);
      assert.ok(email.text.includes(`reference: ${reference}`), email.text);
      assert.ok(email.text.includes(alert.id));
      const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from pgboss.job
      where name = ${alertEmailJob.name} and data->>'alertId' in (
        select id::text from ops_alerts where details->>'reference' = ${reference})
    `.execute(world.ctx.db);
      assert.equal(rows[0]?.n, '1', 'one email job');
    },
  );

  it('an alert whose transaction rolls back is neither stored nor emailed', BOUNDED, async () => {
    const marker = `rollback-${Date.now()}`;
    await assert.rejects(
      world.ctx.db.transaction().execute(async (trx) => {
        await raiseAlert(
          trx,
          { kind: 'topup_amount_mismatch', message: marker, details: { reference: marker } },
          world.ctx.clock.now(),
          world.ctx.jobs,
        );
        throw new Error('roll back');
      }),
      /roll back/,
    );
    const stored = await world.ctx.db
      .selectFrom('ops_alerts')
      .select('id')
      .where('message', '=', marker)
      .execute();
    assert.equal(stored.length, 0);
    const { rows } = await sql<{ n: string }>`
      select count(*)::text as n from pgboss.job j join ops_alerts a on a.id::text = j.data->>'alertId'
      where j.name = ${alertEmailJob.name} and a.message = ${marker}
    `.execute(world.ctx.db);
    assert.equal(rows[0]?.n, '0');

    // The same, committed: stored, and its email arrives.
    await world.ctx.db
      .transaction()
      .execute((trx) =>
        raiseAlert(
          trx,
          { kind: 'topup_amount_mismatch', message: marker, details: { reference: marker } },
          world.ctx.clock.now(),
          world.ctx.jobs,
        ),
      );
    await emailWhere((m) => m.text.includes(marker));
    assert.equal((await mailbox(world, OPS_EMAIL)).filter((e) => e.text.includes(marker)).length, 1);
  });
});

describe(`alert email without OPS_EMAIL (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  it('no email is sent, and the alert is still stored and listed', BOUNDED, async () => {
    assert.equal(world.ctx.config.opsEmail, undefined);
    const user = await signIn(world);
    const admin = await signIn(world, adminPhone);
    const reference = await amountMismatch(world, user);
    const [alert] = await alertsOf(world, admin, reference);
    assert.ok(alert !== undefined, 'the alert is listed');
    assert.equal(alert.kind, 'topup_amount_mismatch');

    // Its email job was enqueued with it; drive it to completion here (no worker runs in this world).
    const { rows } = await sql<{ data: { alertId: string } }>`
      select data from pgboss.job where name = ${alertEmailJob.name} and data->>'alertId' = ${alert.id}
    `.execute(world.ctx.db);
    assert.equal(rows.length, 1, 'the email job was enqueued with the alert');
    await world.ctx.jobs.runNow(alertEmailJob, rows[0]!.data);
    assert.deepEqual(world.ctx.sandbox!.state.emails, [], 'nothing was sent to anyone');
    assert.deepEqual(await mailbox(world, OPS_EMAIL), []);
    await assertLedgerOk(world);
  });
});
