import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { chargeSuccess, createIntent, sendWebhook, walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { restoreInto } from '../helpers/pg-restore.ts';
import { until } from '../helpers/until.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The backup and restore of docs/operations.md, as an operator runs it: money moves (a top-up by a
// signed webhook, a purchase delivered, one failed and refunded), pg_dump takes the database, a NEW
// database is created and the dump restored into it, and the ledger check (npm run ledger:check, the
// same script) passes on the restored copy, whose every balance is the original's. PostgreSQL only:
// PGlite has no pg_dump (its backup is a copy of its data directory, stopped).

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '..', '..');
const node = path.join(repoRoot, 'node_modules', '.bin', 'node');

/** Every ledger account's balance, by code: what a restore must give back exactly. */
async function balances(url: string): Promise<Array<{ code: string; balance: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ code: string; balance: string }>(
      'select code, balance::text as balance from ledger_accounts order by code',
    );
    return rows;
  } finally {
    await client.end();
  }
}

describe('backup and restore (pg_dump, createdb, pg_restore, ledger:check)', {
  skip: !onPostgres() && 'PostgreSQL only: PGlite has no pg_dump (set DATABASE_URL to run it)',
}, () => {
  let world: World;
  let dumpDir: string;
  const restoredName = `billrail_restore_${randomBytes(6).toString('hex')}`;
  before(async () => {
    world = await createWorld();
    dumpDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-backup-'));
  });
  after(async () => {
    await world?.close();
    if (dumpDir !== undefined) await rm(dumpDir, { recursive: true, force: true });
    const adminUrl = process.env.DATABASE_URL;
    if (adminUrl !== undefined) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`drop database if exists ${restoredName} with (force)`);
      } finally {
        await admin.end();
      }
    }
  });

  it('a restored dump passes the ledger check with every balance as it was', async () => {
    // Money moves: a top-up credited by its signed webhook, a purchase delivered, one refunded.
    const user = await buyer(world, 0);
    const intent = await createIntent(world, user, 2_000);
    const answer = await sendWebhook(world, chargeSuccess(intent.reference, 200_000));
    assert.equal(answer.status, 200);
    await until(async () => (await walletKobo(world, user.userId)) === 200_000n, 'the top-up is credited');
    assert.equal(
      (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 })).status,
      'success',
    );
    assert.equal(
      (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 300 })).status,
      'failed',
    );
    const walletBefore = await walletKobo(world, user.userId);
    assert.ok(walletBefore < 200_000n, 'the delivered purchase was paid for');

    const sourceUrl = world.ctx.database.url!;
    const dump = path.join(dumpDir, 'billrail.dump');
    await run('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, sourceUrl]);
    const restoredUrl = new URL(await restoreInto(sourceUrl, restoredName, dump));

    // The full check, as the runbook says: every entry of the copy, not the checkpoint's sums.
    const { stdout } = await run(node, ['src/ledger/check-cli.ts', '--full'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: restoredUrl.toString(), LOG_LEVEL: 'silent' },
    });
    const check = JSON.parse(stdout) as { ok: boolean; accounts: number; entries: number };
    assert.equal(check.ok, true, `the ledger check passes on the restored copy: ${stdout}`);
    assert.ok(check.entries > 0, 'the restored ledger has the entries');

    const original = await balances(sourceUrl);
    assert.deepEqual(await balances(restoredUrl.toString()), original, 'every balance is as it was');
    assert.ok(
      original.some((row) => row.balance === walletBefore.toString()),
      "the buyer's wallet is among them",
    );
  });
});
