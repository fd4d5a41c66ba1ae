import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { serviceNames } from '../shared/display-names.ts';
import type { PauseView } from './schemas.ts';

// Operators' pauses (API.md section 17.4, decision 0042). A pause stops new purchases of a service,
// or of a service through one provider, before any debit; purchases already accepted go on.
//
// The database holds the pauses; every process keeps a copy (createPauseCopy) that it reads again
// when it is older than PAUSES_REFRESH_MS (at most 4 s), so another process refuses a paused service
// within 5 s, and the process that paused or resumed drops its copy on commit, so it sees the change
// at once. A purchase accepted in that window is allowed by the contract: a pause is an operator's
// switch, not a balance guard, so it is checked before the debit, not under the wallet's lock.

export type Pause = {
  service: VtuServiceName;
  /** Null: the service through every provider. */
  provider: VtuProviderName | null;
  reason: string;
  pausedBy: string;
  pausedAt: Date;
  updatedAt: Date;
};

/** What the pause operations are given: the database and the time a pause is set. */
export type PauseDeps = {
  db: Kysely<DB>;
  now: () => Date;
  /** Which provider each service is routed to now (config.vtu.routes): whether a provider's pause is in effect. */
  routes: Readonly<Record<VtuServiceName, VtuProviderName>>;
};

const label = (service: VtuServiceName, provider: VtuProviderName | null): string =>
  provider === null ? service : `${service} through ${provider}`;

const pauseOfRow = (row: {
  service: string;
  provider: string | null;
  reason: string;
  paused_by: string;
  paused_at: Date | string;
  updated_at: Date | string;
}): Pause => ({
  service: row.service as VtuServiceName,
  provider: row.provider as VtuProviderName | null,
  reason: row.reason,
  pausedBy: row.paused_by,
  pausedAt: new Date(row.paused_at),
  updatedAt: new Date(row.updated_at),
});

/** A pause as an operator reads it, in effect or not under this process's routing. */
export const pauseViewOf = (deps: Pick<PauseDeps, 'routes'>, pause: Pause): PauseView => ({
  service: pause.service,
  ...(pause.provider === null ? {} : { provider: pause.provider }),
  inEffect: pause.provider === null || deps.routes[pause.service] === pause.provider,
  reason: pause.reason,
  pausedBy: pause.pausedBy,
  pausedAt: pause.pausedAt.toISOString(),
  updatedAt: pause.updatedAt.toISOString(),
});

/** Every pause in force, the service-wide one of a service before its providers'. */
export async function readPauses(db: Kysely<DB> | Transaction<DB>): Promise<Pause[]> {
  const rows = await db
    .selectFrom('service_pauses')
    .select(['service', 'provider', 'reason', 'paused_by', 'paused_at', 'updated_at'])
    .orderBy('service')
    .orderBy(sql`provider nulls first`)
    .execute();
  return rows.map(pauseOfRow);
}

/**
 * Pauses the service (through the provider), or, when it is paused so already, sets the pause's
 * reason (the admin who set it is then the one shown): pausing is idempotent, never a 409.
 */
export async function pauseService(
  deps: PauseDeps,
  trx: Transaction<DB>,
  adminId: string,
  request: { service: VtuServiceName; provider?: VtuProviderName | undefined; reason: string },
): Promise<Pause> {
  const provider = request.provider ?? null;
  const now = deps.now();
  // One pause per service and provider (the unique index on the provider's coalesce): the
  // conflict updates the reason, keeping since when it is paused.
  const { rows } = await sql<Parameters<typeof pauseOfRow>[0]>`
    insert into service_pauses (id, service, provider, reason, paused_by, paused_at, updated_at)
    values (${newId()}, ${request.service}, ${provider}, ${request.reason}, ${adminId}, ${now}, ${now})
    on conflict (service, (coalesce(provider, ''))) do update
      set reason = excluded.reason, paused_by = excluded.paused_by, updated_at = excluded.updated_at
    returning service, provider, reason, paused_by, paused_at, updated_at`.execute(trx);
  return pauseOfRow(rows[0]!);
}

/**
 * Lifts the pause of the service (through the provider) and answers it. One not in force is 404:
 * resuming `airtime` through `bills` while `airtime` itself is paused would otherwise answer as
 * if purchases went on, and they would not.
 */
export async function resumeService(
  trx: Transaction<DB>,
  request: { service: VtuServiceName; provider?: VtuProviderName | undefined },
): Promise<Pause> {
  const provider = request.provider ?? null;
  const row = await trx
    .deleteFrom('service_pauses')
    .where('service', '=', request.service)
    .where((eb) => (provider === null ? eb('provider', 'is', null) : eb('provider', '=', provider)))
    .returning(['service', 'provider', 'reason', 'paused_by', 'paused_at', 'updated_at'])
    .executeTakeFirst();
  if (row === undefined) {
    throw new AppError('NOT_FOUND', `${label(request.service, provider)} is not paused`, {
      details: { service: request.service, ...(provider === null ? {} : { provider }) },
    });
  }
  return pauseOfRow(row);
}

/** The pause that stops buying the service through the provider, if any: the service-wide one first. */
export function pauseAmong(
  pauses: readonly Pause[],
  service: VtuServiceName,
  provider: VtuProviderName,
): Pause | null {
  return (
    pauses.find((pause) => pause.service === service && pause.provider === null) ??
    pauses.find((pause) => pause.service === service && pause.provider === provider) ??
    null
  );
}

/**
 * API.md section 2: 503 SERVICE_PAUSED, `details: {service, provider?}` (the provider of a provider's
 * pause). The message is one a person may read (a skipped scheduled run quotes it): the service's
 * display name and the operator's reason, never the provider's name.
 */
export function pausedError(pause: Pause): AppError {
  const name = serviceNames[pause.service] ?? pause.service;
  return new AppError('SERVICE_PAUSED', `${name} is paused for now: ${pause.reason}`, {
    details: { service: pause.service, ...(pause.provider === null ? {} : { provider: pause.provider }) },
  });
}

/** A process's copy of the pauses: read again when older than refreshMs, dropped when this process changes them. */
export type PauseCopy = {
  /** The pauses in force, as last read (at most refreshMs ago, or since this process last changed them). */
  current(): Promise<readonly Pause[]>;
  /** This process changed the pauses (committed): the next call reads them again. */
  changed(): void;
};

/**
 * One per process (module). Ages are measured on the process's monotonic clock, not the service
 * clock (which the sandbox moves): the bound is on real time, as the contract's 5 s is. A read takes
 * the time it started as its age, so a pause committed while it ran is read again in time; the
 * purchases that find the copy stale at once share one read.
 */
export function createPauseCopy(
  db: Kysely<DB>,
  refreshMs: number,
  elapsedMs: () => number = () => performance.now(),
): PauseCopy {
  let copy: { pauses: readonly Pause[]; readAt: number } | undefined;
  // Bumped by changed(): a read started before a change neither serves nor fills the copy after it.
  let generation = 0;
  let reading: { generation: number; pauses: Promise<readonly Pause[]> } | undefined;
  return {
    current() {
      if (copy !== undefined && elapsedMs() - copy.readAt < refreshMs) return Promise.resolve(copy.pauses);
      if (reading === undefined || reading.generation !== generation) {
        const startedAt = elapsedMs();
        const started = generation;
        const pauses: Promise<readonly Pause[]> = readPauses(db)
          .then((read) => {
            if (started === generation) copy = { pauses: read, readAt: startedAt };
            return read;
          })
          .finally(() => {
            if (reading?.pauses === pauses) reading = undefined;
          });
        reading = { generation: started, pauses };
      }
      return reading.pauses;
    },
    changed() {
      generation++;
      copy = undefined;
    },
  };
}
