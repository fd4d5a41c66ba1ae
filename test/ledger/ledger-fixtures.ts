import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { DB } from '../../src/db/schema.ts';
import { newId } from '../../src/ids.ts';
import { openUserAccounts, userAccount } from '../../src/ledger/accounts.ts';
import type { PostingEntry, PostingRequest } from '../../src/ledger/postings.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// Shared set-up for the ledger tests: a migrated database of the current kind (PGlite in memory,
// or a fresh PostgreSQL database when DATABASE_URL is set) without the rest of the app, and users
// created straight in the users table so that each test owns its accounts.

export type LedgerDatabase = {
  database: Database;
  db: Kysely<DB>;
  testDatabase: TestDatabase;
  close(): Promise<void>;
};

export async function openLedgerDatabase(): Promise<LedgerDatabase> {
  const testDatabase = await createTestDatabase();
  const database = await openDatabase(testDatabase.target);
  await migrateToLatest(database.db as Kysely<unknown>);
  return {
    database,
    db: database.db,
    testDatabase,
    async close() {
      await database.close();
      await testDatabase.drop();
    },
  };
}

export const now = (): Date => new Date('2026-11-22T12:00:00Z');

/** Inserts a user row and opens its four ledger accounts; returns the user id. */
export async function createUser(db: Kysely<DB>): Promise<string> {
  const id = newId();
  await db
    .insertInto('users')
    .values({
      id,
      phone: `+234${randomBytes(5).toString('hex')}`,
      email: null,
      first_name: null,
      last_name: null,
      referral_code: randomBytes(6).toString('hex').toUpperCase(),
      referred_by_code: null,
      created_at: now(),
      updated_at: now(),
    })
    .execute();
  await openUserAccounts(db, id, now());
  return id;
}

export const wallet = (userId: string): string => userAccount('wallet', userId);
export const savings = (userId: string): string => userAccount('savings', userId);

let referenceCounter = 0;
/** A reference unique within this process and across test databases. */
export function uniqueReference(prefix: string): string {
  referenceCounter += 1;
  return `${prefix}_${randomBytes(4).toString('hex')}_${referenceCounter}`;
}

/** A two-entry posting moving `amount` kobo from one account to another. */
export function transfer(
  reference: string,
  from: string,
  to: string,
  amount: bigint,
  description = 'test transfer',
): PostingRequest {
  const entries: PostingEntry[] = [
    { account: from, amount: -amount },
    { account: to, amount },
  ];
  return { reference, description, entries };
}

export async function balanceOf(db: Kysely<DB>, code: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  return row.balance;
}

export type LedgerCounts = { transactions: bigint; entries: bigint };

export async function ledgerCounts(db: Kysely<DB>): Promise<LedgerCounts> {
  const transactions = await db
    .selectFrom('ledger_transactions')
    .select((eb) => eb.fn.countAll<bigint>().as('n'))
    .executeTakeFirstOrThrow();
  const entries = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return { transactions: BigInt(transactions.n), entries: BigInt(entries.n) };
}

export type StoredEntry = { account: string; amount: bigint; balanceAfter: bigint };

/** The entries stored under a reference, in account-code order; empty when it was never posted. */
export async function entriesOf(db: Kysely<DB>, reference: string): Promise<StoredEntry[]> {
  const rows = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .select(['a.code', 'e.amount', 'e.balance_after'])
    .where('t.reference', '=', reference)
    .execute();
  // Sorted here rather than in SQL: the database's collation need not order codes the way JS does.
  return rows
    .map((r) => ({ account: r.code, amount: r.amount, balanceAfter: r.balance_after }))
    .sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
}

/** A posting's movement per account, netted and sorted by code: what the ledger stores. */
export function netted(entries: PostingEntry[]): Array<[string, bigint]> {
  const perAccount = new Map<string, bigint>();
  for (const e of entries) perAccount.set(e.account, (perAccount.get(e.account) ?? 0n) + e.amount);
  return [...perAccount.entries()]
    .filter(([, amount]) => amount !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
