import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { type Buyer, buyCall, buyer, mtn } from './purchase-support.ts';

// CONTRIBUTING.md "Follow one purchase" names every file of src/ that one buyAirtime runs code in,
// from the request to its settlement, and this test keeps that list true. It runs a purchase under
// V8's precise coverage (function call counts, reset just before the request) and compares the files
// whose functions ran with the files the section's numbered steps name. The sandbox's simulators
// (src/sandbox/) stand for the provider, an outside party, and are left out. A file that a change
// adds to the path, or takes off it, fails this test until the section says so.

const root = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The src/ files the numbered steps of "Follow one purchase" name. */
async function listedFiles(): Promise<Set<string>> {
  const text = await readFile(path.join(root, 'CONTRIBUTING.md'), 'utf8');
  const section = text.split(/^## Follow one purchase$/m)[1]?.split(/^## /m)[0];
  assert.ok(section !== undefined, 'CONTRIBUTING.md has a section "Follow one purchase"');
  // The numbered steps: from the first line "1. " to the first paragraph that is not a step.
  const steps = section.split(/\n\n/).filter((paragraph) => /^\d+\. /.test(paragraph));
  assert.ok(steps.length > 0, 'the section walks the purchase in numbered steps');
  return new Set(steps.join('\n').match(/src\/[\w./-]+\.ts/g) ?? []);
}

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
  before(async () => {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    // As `npm start` runs it, without Redis: with REDIS_URL the rate limit's count also runs
    // src/http/rate-limit-store.ts (the section says so after its steps).
    world = await createWorld({ withoutRedis: true });
    user = await buyer(world, 5_000);
  });
  after(async () => {
    await world?.close();
    await session.post('Profiler.stopPreciseCoverage');
    session.disconnect();
  });

  /** Buys airtime and waits until this process has sent and settled it. */
  const buyAirtime = async () => {
    const accepted = ok(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
    );
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    return accepted;
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

    const listed = await listedFiles();
    const unlisted = [...ran].filter((file) => !listed.has(file)).sort();
    const notRun = [...listed].filter((file) => !ran.has(file)).sort();
    assert.deepEqual(unlisted, [], 'files the purchase ran code in, missing from CONTRIBUTING.md');
    assert.deepEqual(notRun, [], 'files CONTRIBUTING.md lists, in which the purchase ran no code');
    // The count the section states, so that it stays true too.
    const text = await readFile(path.join(root, 'CONTRIBUTING.md'), 'utf8');
    const stated = /runs code in (\d+) files/.exec(text)?.[1];
    assert.equal(Number(stated), ran.size, `CONTRIBUTING.md says the purchase runs code in ${stated} files`);
  });
});
