import assert from 'node:assert/strict';
import type { Kysely, Transaction } from 'kysely';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';

// What every process is sending to each provider, in the database (issue 43 item 2, decision 0051).
// A provider's balance, as it reports it, lacks what is on its way to it; with one process that could
// be counted in memory, with N each would count only its own sends and together they could send N
// batches more than the float holds. So a claim reserves, in the transaction that marks purchases
// sent, the wholesale price of each on its purchase row and the sum on its provider's row
// (vtu_float_reservations); the settlement that ends a purchase (success or failed) releases what it
// held, in its own transaction. An unknown answer holds the float until a requery settles it, and a
// process that dies after its claim leaves its purchases to the requery runner, whose settlement
// releases them: nothing expires, for nothing is held by a process.
//
// The balance is read before the provider's row is locked (no outside call inside a transaction), so
// a purchase answered between that read and the lock may not be in the balance read and is no longer
// reserved. The row's released_kobo only grows: what was released since a snapshot taken before the
// balance read is counted as still in flight (decision 0051 shows why this is exact enough).

/** A provider's row as a float decision reads it. */
export type FloatReservation = { reservedKobo: bigint; releasedKobo: bigint };

const none: FloatReservation = { reservedKobo: 0n, releasedKobo: 0n };

/** The providers' rows as they are now, unlocked: the snapshot taken before a balance is read. */
export async function readFloatReservations(
  db: Kysely<DB>,
  providers: readonly string[],
): Promise<Map<string, FloatReservation>> {
  if (providers.length === 0) return new Map();
  const rows = await db
    .selectFrom('vtu_float_reservations')
    .select(['provider', 'reserved_kobo', 'released_kobo'])
    .where('provider', 'in', providers)
    .execute();
  const read = new Map(
    rows.map((r) => [r.provider, { reservedKobo: r.reserved_kobo, releasedKobo: r.released_kobo }]),
  );
  return new Map(providers.map((p) => [p, read.get(p) ?? none]));
}

/**
 * Locks the providers' rows (made when missing) until the transaction ends, in name order, and reads
 * them: a float decision made under this lock is the only one for these providers until it commits.
 */
export async function lockFloatReservations(
  trx: Transaction<DB>,
  providers: readonly string[],
  now: Date,
): Promise<Map<string, FloatReservation>> {
  const sorted = [...new Set(providers)].sort();
  // One statement makes the missing rows and locks them all (a conflict's update locks the row), in
  // the order given, the same in every transaction: two claims cannot wait on each other.
  const { rows } = await statement<{ provider: string; reserved_kobo: bigint; released_kobo: bigint }>(
    'vtu.float-reservations',
  )`
    insert into vtu_float_reservations (provider, updated_at)
    select provider, ${now}::timestamptz from unnest(${sorted}::text[]) with ordinality as v(provider, n)
    order by n
    on conflict (provider) do update set provider = excluded.provider
    returning provider, reserved_kobo, released_kobo`.execute(trx);
  assert.equal(rows.length, sorted.length, 'a row for every provider locked');
  return new Map(
    rows.map((r) => [r.provider, { reservedKobo: r.reserved_kobo, releasedKobo: r.released_kobo }]),
  );
}

/** Adds what a claim reserved to its providers' rows, locked by lockFloatReservations in this transaction. */
export async function reserveFloat(
  trx: Transaction<DB>,
  reservedKobo: ReadonlyMap<string, bigint>,
  now: Date,
): Promise<void> {
  const { providers, amounts } = columnsOf(reservedKobo);
  if (providers.length === 0) return;
  const { rows } = await statement<{ provider: string }>('vtu.float-reserve')`
    update vtu_float_reservations as r
    set reserved_kobo = r.reserved_kobo + v.kobo, updated_at = ${now}::timestamptz
    from unnest(${providers}::text[], ${amounts}::bigint[]) as v(provider, kobo)
    where r.provider = v.provider
    returning r.provider`.execute(trx);
  assert.equal(rows.length, providers.length, 'every provider reserved on was locked, so has its row');
}

/**
 * Releases what settled purchases held of their providers' floats, in the settlement's transaction:
 * one UPDATE for the whole batch, after the batch's other locks. A claim locks its purchases before
 * the row, as a settlement does, so neither waits on the other in a circle.
 */
export async function releaseFloat(
  trx: Transaction<DB>,
  releasedKobo: ReadonlyMap<string, bigint>,
  now: Date,
): Promise<void> {
  const { providers, amounts } = columnsOf(releasedKobo);
  if (providers.length === 0) return;
  // The CHECK (reserved_kobo >= 0) is the second opinion: a release of what was never reserved
  // rolls the settlement back rather than let the float look larger than it is.
  const { rows } = await statement<{ provider: string }>('vtu.float-release')`
    update vtu_float_reservations as r
    set reserved_kobo = r.reserved_kobo - v.kobo, released_kobo = r.released_kobo + v.kobo,
      updated_at = ${now}::timestamptz
    from unnest(${providers}::text[], ${amounts}::bigint[]) as v(provider, kobo)
    where r.provider = v.provider
    returning r.provider`.execute(trx);
  assert.equal(
    rows.length,
    providers.length,
    "a purchase reserves under its provider's row: a release finds it",
  );
}

/** The providers (in name order, the order rows are locked in) and their amounts, those above zero. */
function columnsOf(kobo: ReadonlyMap<string, bigint>): { providers: string[]; amounts: bigint[] } {
  const changes = [...kobo].filter(([, amount]) => amount > 0n).sort(([a], [b]) => (a < b ? -1 : 1));
  return { providers: changes.map(([provider]) => provider), amounts: changes.map(([, amount]) => amount) };
}

/** What the purchases sent to a provider hold of its float now (operators, tests). */
export async function floatReservedKobo(db: Kysely<DB>, provider: string): Promise<bigint> {
  return (await readFloatReservations(db, [provider])).get(provider)!.reservedKobo;
}
