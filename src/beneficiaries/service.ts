import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { BeneficiariesTable, DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { requireWithin } from '../limits.ts';
import {
  type BeneficiaryService,
  type BeneficiaryView,
  beneficiariesPerUserMax,
  type SaveBeneficiaryRequest,
} from './schemas.ts';

// Beneficiaries (API.md section 16): recipients a user saved by choice ("Save as Mum"), kept by the
// service so they follow the person to another phone. Saving is an upsert by service + recipient.
//
// The limit of 100 per user is decided under a per-user lock: two saves of new recipients at 99 would
// otherwise both count 99 and both insert. The lock is a transaction-scoped advisory lock on the
// user's id rather than a row lock on `users`: it serialises only this user's saves, reads no other
// domain's table, and does not hold up the purchases' foreign-key checks on the user row.

export type BeneficiaryDeps = { db: Kysely<DB>; clock: Clock };

type Row = Selectable<BeneficiariesTable>;

function toView(row: Row): BeneficiaryView {
  return {
    id: row.id,
    service: row.service as BeneficiaryService,
    label: row.label,
    recipient: row.recipient,
    ...(row.network !== null ? { network: row.network as NonNullable<BeneficiaryView['network']> } : {}),
    ...(row.details !== null ? { details: row.details as Record<string, string> } : {}),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Holds this user's beneficiary decisions one at a time until the transaction ends. */
async function lockUserBeneficiaries(trx: Transaction<DB>, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`beneficiaries:${userId}`}))`.execute(trx);
}

/** The caller's beneficiaries, most recently saved first; all of one service when asked. */
export async function listBeneficiaries(
  db: Kysely<DB>,
  userId: string,
  service: BeneficiaryService | undefined,
): Promise<BeneficiaryView[]> {
  let query = db.selectFrom('beneficiaries').selectAll().where('user_id', '=', userId);
  if (service !== undefined) query = query.where('service', '=', service);
  const rows = await query
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(beneficiariesPerUserMax)
    .execute();
  return rows.map(toView);
}

/**
 * Saves a beneficiary: the same service and recipient again replaces its label, network and details
 * (and makes it the most recently saved); a new one is refused with 422 ABOVE_MAXIMUM
 * (details.limit, details.unit "count") when the user already keeps the maximum.
 */
export async function saveBeneficiary(
  deps: BeneficiaryDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  request: SaveBeneficiaryRequest,
): Promise<BeneficiaryView> {
  const now = deps.clock.now();
  const fields = {
    label: request.label,
    network: request.network ?? null,
    details: request.details === undefined ? null : JSON.stringify(request.details),
    updated_at: now,
  };
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    await lockUserBeneficiaries(trx, userId);
    const updated = await trx
      .updateTable('beneficiaries')
      .set(fields)
      .where('user_id', '=', userId)
      .where('service', '=', request.service)
      .where('recipient', '=', request.recipient)
      .returningAll()
      .executeTakeFirst();
    if (updated !== undefined) return toView(updated);

    const { count } = await trx
      .selectFrom('beneficiaries')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    // This one would be the (count + 1)th: beyond the maximum it is 422 ABOVE_MAXIMUM, unit count.
    requireWithin(
      Number(count) + 1,
      'number of saved beneficiaries',
      { min: 1, max: beneficiariesPerUserMax },
      'count',
    );
    const inserted = await trx
      .insertInto('beneficiaries')
      .values({
        id: newId(),
        user_id: userId,
        service: request.service,
        recipient: request.recipient,
        created_at: now,
        ...fields,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toView(inserted);
  });
}

/** Deletes one of the caller's beneficiaries; another user's id, or an unknown one, is 404. */
export async function deleteBeneficiary(
  deps: BeneficiaryDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  id: string,
): Promise<{ id: string }> {
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const deleted = await trx
      .deleteFrom('beneficiaries')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returning('id')
      .executeTakeFirst();
    if (deleted === undefined) throw notFound('beneficiary');
    return { id: deleted.id };
  });
}
