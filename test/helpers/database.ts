import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { type DatabaseTarget, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createJobQueue } from '../../src/jobs/queue.ts';

// Every test world gets a database of its own: an in-memory PGlite by default, or a fresh
// PostgreSQL database (created from DATABASE_URL, dropped afterwards) when DATABASE_URL is set.
//
// Each starts from a template made once per set of migrations and shared by every test file of the
// run: the migrated schema with pg-boss's tables. Making a PGlite database (initdb) and migrating it
// took about 2.5 s of CPU per world, which was most of the suite's time; a PGlite world now loads a
// dump of the template (about 0.5 s) and a PostgreSQL one is cloned from a template database. A
// world still migrates on start (the service's own path), which then finds nothing to apply.

export const onPostgres = (): boolean =>
  process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

export type TestDatabase = { target: DatabaseTarget; drop(): Promise<void> };

/**
 * A database of its own for a test: migrated (from the template), or `empty` for the tests of the
 * migrations themselves.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  if (!onPostgres()) {
    return {
      target: {
        kind: 'pglite',
        dataDir: null,
        ...(options.empty === true ? {} : { loadDataDir: await pgliteTemplate() }),
      },
      drop: async () => {},
    };
  }
  const adminUrl = process.env.DATABASE_URL!;
  const template = options.empty === true ? 'template1' : await postgresTemplate(adminUrl);
  const name = `billrail_test_${randomBytes(6).toString('hex')}`;
  await onAdmin(adminUrl, (admin) => admin.query(`create database ${name} template ${template}`));
  return {
    target: { kind: 'postgres', url: databaseUrl(adminUrl, name), poolMax: 30 },
    async drop() {
      await onAdmin(adminUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
    },
  };
}

const require = createRequire(import.meta.url);
const migrationsDir = path.resolve(import.meta.dirname, '..', '..', 'src', 'db', 'migrations');

/**
 * What the template holds depends on: the migrations (names and texts), and the versions of PGlite
 * and pg-boss (its schema). A change to any makes a new template; the old one is left unused.
 */
const templateKey: string = (() => {
  const hash = createHash('sha256');
  for (const file of readdirSync(migrationsDir).sort()) {
    hash.update(file).update(readFileSync(path.join(migrationsDir, file)));
  }
  for (const pkg of ['@electric-sql/pglite', 'pg-boss']) {
    const manifest = path.join(path.dirname(require.resolve(pkg)), '..', 'package.json');
    hash.update(`${pkg}@${(JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version}`);
  }
  return hash.digest('hex').slice(0, 16);
})();

/** The schema a world starts with: every migration, and pg-boss's tables (installed by its start). */
async function installSchema(target: DatabaseTarget): Promise<Blob | undefined> {
  const database = await openDatabase(target);
  try {
    await migrateToLatest(database.db as Kysely<unknown>);
    const jobs = await createJobQueue(database, { logger: pino({ level: 'silent' }), runWorkers: false });
    await jobs.stop();
    return database.pglite === undefined ? undefined : await database.pglite.dumpDataDir('none');
  } finally {
    await database.close();
  }
}

let pgliteTemplateBlob: Promise<Blob> | undefined;

/**
 * The template's dump, made by the first file that needs it and kept in the system's temporary
 * directory for the others: written under a name of its own, then renamed, so a file running beside
 * the one writing it reads a whole dump or none (and then makes its own, the same).
 */
function pgliteTemplate(): Promise<Blob> {
  pgliteTemplateBlob ??= (async () => {
    const dir = path.join(os.tmpdir(), 'billrail-test-templates');
    const file = path.join(dir, `pglite-${templateKey}.tar`);
    try {
      return new Blob([await readFile(file)]);
    } catch {
      const dump = (await installSchema({ kind: 'pglite', dataDir: null }))!;
      mkdirSync(dir, { recursive: true });
      const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
      await rename(partial, file);
      return dump;
    }
  })();
  return pgliteTemplateBlob;
}

let postgresTemplateName: Promise<string> | undefined;

/**
 * The template database on the server of DATABASE_URL, made once under an advisory lock (test files
 * run side by side): migrated under a name of its own, then renamed into place, so that a template
 * with its name is always whole. Nobody stays connected to it, as cloning requires.
 */
function postgresTemplate(adminUrl: string): Promise<string> {
  postgresTemplateName ??= onAdmin(adminUrl, async (admin) => {
    const name = `billrail_template_${templateKey}`;
    await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
    try {
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount === 0) {
        const building = `${name}_building`;
        await admin.query(`drop database if exists ${building} with (force)`);
        await admin.query(`create database ${building}`);
        await installSchema({ kind: 'postgres', url: databaseUrl(adminUrl, building), poolMax: 2 });
        await admin.query(`alter database ${building} rename to ${name}`);
      }
    } finally {
      await admin.query('select pg_advisory_unlock(hashtext($1))', [name]);
    }
    return name;
  });
  return postgresTemplateName;
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function onAdmin<T>(adminUrl: string, work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}
