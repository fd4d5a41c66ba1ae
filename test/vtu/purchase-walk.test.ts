import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { domainEventJob } from '../../src/events/domain-events.ts';
import { notificationEmailJob, notificationPushJob } from '../../src/notifications/jobs.ts';
import { onPostgres } from '../helpers/database.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { poolerUrl } from '../helpers/pooler.ts';
import { createWorld, get, ok, post, type World } from '../helpers/world.ts';
import { type Buyer, buyCall, buyer, mtn } from './purchase-support.ts';

// CONTRIBUTING.md "Follow one purchase" names every file of src/ that one buyAirtime runs code in,
// from the request to its settlement, then on its notification leg (the settled event's job, the
// inbox entry, the push and the email), and this test keeps both lists true. It runs a purchase
// under V8's precise coverage (function call counts, reset just before the request) and compares the
// files whose functions ran with the files the section's numbered steps name; then, the purchase
// settled, it runs the leg's jobs as the worker would, and compares the same way with the steps
// under the section's heading "### The notification leg". The sandbox's simulators (src/sandbox/:
// the provider, the push service, the mailbox) stand for outside parties and are left out. A file
// that a change adds to either path, or takes off it, fails this test until the section says so.

const root = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** One part of the walk as the section writes it: the src/ files its numbered steps name, and the count it states. */
type WalkPart = { files: Set<string>; stated: number };

/**
 * The two parts of "Follow one purchase": the purchase (the steps before the heading "### The
 * notification leg") and its notification leg (the steps under it), each with the number of files
 * its first paragraph says it runs code in.
 */
async function walkParts(): Promise<{ purchase: WalkPart; leg: WalkPart }> {
  const text = await readFile(path.join(root, 'CONTRIBUTING.md'), 'utf8');
  const section = text.split(/^## Follow one purchase$/m)[1]?.split(/^## /m)[0];
  assert.ok(section !== undefined, 'CONTRIBUTING.md has a section "Follow one purchase"');
  const [purchase, leg, ...rest] = section.split(/^### The notification leg$/m);
  assert.ok(
    purchase !== undefined && leg !== undefined,
    'the section has a heading "### The notification leg"',
  );
  assert.equal(rest.length, 0, 'one heading "### The notification leg"');
  return { purchase: walkPart(purchase, 'the purchase'), leg: walkPart(leg, 'the notification leg') };
}

/**
 * Whether the service's database client names statements, which the paragraphs "On PostgreSQL"
 * describe: on PostgreSQL, but not through PgBouncer, where they are off (decision 0027).
 */
const preparesByName = onPostgres() && poolerUrl() === undefined;

/**
 * A part as this engine runs it: the files of its numbered steps, and on PostgreSQL those of its
 * paragraph "On PostgreSQL" too; the count its first paragraph states ("runs code in 23 files",
 * "(24 on PostgreSQL)").
 */
function walkPart(text: string, name: string): WalkPart {
  const paragraphs = text.trim().split(/\n\n/);
  const counts = /runs code in (\d+) files[^(]*(?:\((\d+) on PostgreSQL)?/.exec(paragraphs[0] ?? '');
  assert.ok(counts?.[1] !== undefined, `the first paragraph of ${name} says in how many files it runs code`);
  const stated = preparesByName ? (counts[2] ?? counts[1]) : counts[1];
  // The numbered steps ("1. ", "6. "): the paragraphs between them (configuration, what is off the
  // path) name files that this walk does not run.
  const steps = paragraphs.filter((paragraph) => /^\d+\. /.test(paragraph));
  assert.ok(steps.length > 0, `the section walks ${name} in numbered steps`);
  const engine = preparesByName
    ? paragraphs.filter((paragraph) => paragraph.startsWith('On PostgreSQL'))
    : [];
  const named = [...steps, ...engine].join('\n').match(/src\/[\w./-]+\.ts/g) ?? [];
  return { files: new Set(named), stated: Number(stated) };
}

/** Compares the files a part of the walk ran code in with those its steps name, and its stated count. */
function assertWalk(part: WalkPart, ran: Set<string>, name: string): void {
  const unlisted = [...ran].filter((file) => !part.files.has(file)).sort();
  const notRun = [...part.files].filter((file) => !ran.has(file)).sort();
  assert.deepEqual(unlisted, [], `files ${name} ran code in, missing from CONTRIBUTING.md`);
  assert.deepEqual(notRun, [], `files CONTRIBUTING.md lists for ${name}, in which it ran no code`);
  assert.equal(part.stated, ran.size, `CONTRIBUTING.md says ${name} runs code in ${part.stated} files`);
}

/** A subscription of the sandbox's push service (POST /__sandbox/push/subscriptions). */
type SandboxSubscription = { endpoint: string; keys: { p256dh: string; auth: string } };

type ScriptCoverage = { url: string; functions: Array<{ ranges: Array<{ count: number }> }> };

/** The src/ files (less the sandbox) with a function that ran since the last take. */
async function filesRun(session: Session): Promise<Set<string>> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
  const files = new Set<string>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = path.relative(root, fileURLToPath(script.url)).split(path.sep).join('/');
    if (!file.startsWith('src/') || file.startsWith('src/sandbox/')) continue;
    if (script.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0)) files.add(file);
  }
  return files;
}

describe(`one purchase's walk through src/ (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const session = new Session();
  let world: World;
  let user: Buyer;
  /** The buyer's verified address and device: the leg sends to both. */
  const address = `walk.${Date.now()}@example.test`;
  let device: SandboxSubscription;
  before(async () => {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    // As `npm start` runs it, without Redis: with REDIS_URL the rate limit's count also runs
    // src/http/rate-limit-store.ts (the section says so after its steps).
    world = await createWorld({ withoutRedis: true });
    user = await buyer(world, 5_000);
    // A buyer the leg reaches both ways: an address verified (as verifyEmail leaves it) and a device
    // at the sandbox's push service, subscribed and saved as the web client does it.
    await world.ctx.db
      .updateTable('users')
      .set({ email: address, email_verified_at: world.ctx.clock.now() })
      .where('id', '=', user.userId)
      .execute();
    const subscribed = await fetch(`${world.baseUrl}/__sandbox/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(subscribed.status, 200);
    device = ((await subscribed.json()) as { data: SandboxSubscription }).data;
    const { endpoint, keys } = device;
    ok(
      await post(
        world,
        'savePushSubscription',
        { endpoint, p256dh: keys.p256dh, auth: keys.auth },
        { token: user.accessToken },
      ),
    );
  });
  after(async () => {
    await world?.close();
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
  });

  const mailsTo = (to: string) => world.ctx.sandbox!.state.emails.filter((mail) => mail.to === to);
  /** What the sandbox's push service received at the endpoint (GET /__sandbox/push), newest first. */
  const pushesAt = async (endpoint: string) => {
    const response = await fetch(`${world.baseUrl}/__sandbox/push?endpoint=${encodeURIComponent(endpoint)}`);
    assert.equal(response.status, 200);
    return (
      (await response.json()) as { data: { items: Array<{ payload: { notificationId?: string } | null }> } }
    ).data.items;
  };

  /** Buys airtime and waits until this process has sent and settled it. */
  const buyAirtime = async () => {
    const accepted = ok(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
    );
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    return accepted;
  };

  /**
   * Runs what the worker runs after a settlement, each queue drained as the worker would drain it:
   * the domain events, then the email and push jobs their inbox entries enqueued. Answers how many
   * jobs of each ran.
   */
  const deliverNotifications = async () => {
    const runs = {
      events: await runQueuedJobs(world, domainEventJob),
      emails: await runQueuedJobs(world, notificationEmailJob),
      pushes: await runQueuedJobs(world, notificationPushJob),
    };
    const failed = Object.values(runs).flatMap((run) => run.failed.map(({ error }) => String(error)));
    assert.deepEqual(failed, [], 'every job of the leg succeeded');
    return {
      events: runs.events.done.length,
      emails: runs.emails.done.length,
      pushes: runs.pushes.done.length,
    };
  };

  it('runs code in exactly the files that CONTRIBUTING.md lists, from the request to the settlement', async () => {
    // Twice first: whatever is done once per process or per connection (a statement prepared, a
    // cache filled) is done before the purchase that is measured.
    await buyAirtime();
    await buyAirtime();
    await filesRun(session);
    const accepted = await buyAirtime();
    const ran = await filesRun(session);
    const purchase = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('status')
      .where('id', '=', accepted.id)
      .executeTakeFirstOrThrow();
    assert.equal(purchase.status, 'success', 'the purchase measured was settled');

    assertWalk((await walkParts()).purchase, ran, 'the purchase');
  });

  it('runs code in exactly the files that CONTRIBUTING.md lists on the notification leg: the inbox, the push, the email', async () => {
    // Twice first, each purchase's leg run too, as above; then the leg of one settled purchase alone.
    await buyAirtime();
    await buyAirtime();
    await deliverNotifications();
    const accepted = await buyAirtime();
    const mailsBefore = mailsTo(address).length;
    await filesRun(session);
    const jobs = await deliverNotifications();
    const ran = await filesRun(session);
    assert.deepEqual(
      jobs,
      { events: 1, emails: 1, pushes: 1 },
      "the settled batch's event job, then one email and one push",
    );

    // The leg reached the buyer everywhere, once: the inbox entry, its email and its push.
    const inbox = ok(
      await get<{ items: Array<{ id: string; kind: string; title: string; data: Record<string, unknown> }> }>(
        world,
        'listNotifications',
        { limit: 100 },
        { token: user.accessToken },
      ),
    ).items;
    const entries = inbox.filter((entry) => entry.data.transactionId === accepted.id);
    assert.equal(entries.length, 1, 'one inbox entry for the purchase');
    const entry = entries[0]!;
    assert.equal(entry.kind, 'purchase_succeeded');
    const mails = mailsTo(address).slice(mailsBefore);
    assert.deepEqual(
      mails.map((mail) => mail.subject),
      [entry.title],
      "one email, the entry's",
    );
    const pushes = await pushesAt(device.endpoint);
    assert.equal(
      pushes.filter((push) => push.payload?.notificationId === entry.id).length,
      1,
      'one push of the entry at the device',
    );

    assertWalk((await walkParts()).leg, ran, 'the notification leg');
  });
});
