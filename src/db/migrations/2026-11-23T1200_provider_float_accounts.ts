import { type Kysely, sql } from 'kysely';

// The float account of each VTU provider (DESIGN.md "Money": provider_float:<provider>). The
// providers are a fixed set (config vtuProviderNames, the vtu_markups check), so their accounts are
// opened here like the other system accounts, rather than by an insert before every posting that
// moves a float (which waited on the float row's lock held by every concurrent settlement). Frozen:
// the list is copied, not imported. A database that opened one on demand already keeps it.

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = new Date().toISOString();
  for (const provider of ['data', 'bills', 'social']) {
    await sql`insert into ledger_accounts (code, kind, created_at)
      values (${`provider_float:${provider}`}, 'system', ${now})
      on conflict (code) do nothing`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('the provider float accounts migration is not reversible');
}
