import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DatabaseTarget } from '../../src/db/database.ts';

// Every test world gets a database of its own: an in-memory PGlite by default, or a fresh
// PostgreSQL database (created from DATABASE_URL, dropped afterwards) when DATABASE_URL is set.

export const onPostgres = (): boolean =>
  process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

export type TestDatabase = { target: DatabaseTarget; drop(): Promise<void> };

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!onPostgres()) return { target: { kind: 'pglite', dataDir: null }, drop: async () => {} };
  const adminUrl = process.env.DATABASE_URL!;
  const name = `billrail_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    target: { kind: 'postgres', url: url.toString(), poolMax: 30 },
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
