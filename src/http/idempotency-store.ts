import { hash, type KeyObject, randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import { type Batching, fulfilled } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { type CommitWrite, type WithCommit, writeWithCommit } from '../db/unit-of-work.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { type JobDefinition, jobDefinition } from '../jobs/queue.ts';
import { open, seal, sealingKey } from '../shared/sealed-box.ts';

// Idempotency keys (API.md section 3). A key is scoped to its caller and kept 24 hours. The stored
// response can hold secrets (verifyOtp returns tokens), so it is encrypted at rest under a key
// derived from the server's pepper: a database dump alone does not hand out sessions.

export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** A request still "in progress" after this long died with its process; its key may be reused. */
export const IDEMPOTENCY_STALE_SECONDS = 5 * 60;

export type StoredResponse = { status: number; body: string };

/**
 * A key this request has taken and holds while it runs: released (deleted) when the request ends
 * without an answer to keep, by its holder id, so a late release never frees a retry's hold.
 */
export type KeyHold = { scope: string; key: string; holder: string };

export type BeginResult =
  | { kind: 'started'; hold: KeyHold }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

export type IdempotencyRequest = { scope: string; key: string; operation: string; requestHash: string };

export function requestHash(operation: string, canonicalBody: string): string {
  // One-shot (no Hash stream object): this runs for every request that carries a key.
  return hash('sha256', `${operation}\n${canonicalBody}`, 'hex');
}

/** When a key taken at `now` expires. */
const expiresAt = (now: Date) => new Date(now.getTime() + IDEMPOTENCY_TTL_SECONDS * 1000);

/** The columns of a key that a request has just taken: running, nothing stored, 24 h to live. */
const freshState = (request: IdempotencyRequest, now: Date, holder: string) => ({
  operation: request.operation,
  request_hash: request.requestHash,
  state: 'in_progress' as const,
  response_status: null,
  response_body: null,
  created_at: now,
  expires_at: expiresAt(now),
  holder,
});

/** How often releases that could not reach the database are sent again, and how many at a time. */
const RELEASE_RETRY_MS = 1_000;
const RELEASE_RETRY_BATCH = 200;

export type IdempotencyStoreOptions = {
  /** A release sent again that failed for another reason than the database being out of reach. */
  onReleaseError?: (error: unknown) => void;
};

export function createIdempotencyStore(
  db: Kysely<DB>,
  pepper: string,
  batching: Batching,
  options: IdempotencyStoreOptions = {},
) {
  // A key object made once: a raw key given to every cipher is prepared again each time.
  const aesKey = sealingKey(pepper, 'idempotency-response');
  // Nearly every POST takes a fresh key and stores its response: both are batched across requests.
  const inserts = batching.batcher(async (items: Taking[]) => (await insertMany(db, items)).map(fulfilled), {
    batchMax: 200,
  });
  const keys: KeyTable = {
    db,
    aesKey,
    tryInsert: (request, now, holder) => inserts.add({ request, now, holder }),
  };
  /** A key's completion, its response sealed, ready to write (alone, or in a domain's transaction). */
  const sealed = (request: IdempotencyRequest, response: StoredResponse): KeyCompletion => ({
    scope: request.scope,
    key: request.key,
    status: response.status,
    sealedBody: seal(aesKey, response.body),
  });
  const completions = batching.batcher(
    async (items: Array<{ request: IdempotencyRequest; response: StoredResponse }>) => {
      await writeCompletions(
        db,
        items.map(({ request, response }) => sealed(request, response)),
      );
      return items.map(() => fulfilled(undefined));
    },
    { batchMax: 200 },
  );
  const retries = releaseRetries(db, options);

  return {
    sealed,

    async begin(request: IdempotencyRequest, now: Date): Promise<BeginResult> {
      const holder = randomUUID();
      try {
        return await take(keys, request, now, holder);
      } catch (error) {
        // The database went out of reach midway: a statement that took the key may have committed
        // unheard of. This request ends here with a 503, so whatever it took is released.
        if (isDatabaseUnavailable(error)) retries.later({ scope: request.scope, key: request.key, holder });
        throw error;
      }
    },

    async complete(request: IdempotencyRequest, response: StoredResponse): Promise<void> {
      await completions.add({ request, response });
    },

    /**
     * Completes the key with other writes that report the same answer (an admin operation's audit
     * row), in one transaction of their own: the answer is kept exactly when they are written.
     */
    async completeWith(
      request: IdempotencyRequest,
      response: StoredResponse,
      writes: CommitWrite[],
    ): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await writeCompletions(trx, [sealed(request, response)]);
        await writeWithCommit(trx, writes);
      });
    },

    /**
     * A request that ends without an answer to keep (a 5xx, a 429, an answer never stored) gives
     * its key back, and the client may retry with it. Out of reach, the release is sent again later
     * (releaseRetries) rather than failing the request a second time.
     */
    async release(hold: KeyHold): Promise<void> {
      try {
        await deleteHolds(db, [hold]);
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
        retries.later(hold);
      }
    },

    /** Stops sending releases again: the service is closing. */
    close(): void {
      retries.close();
    },
  };
}

const keyOf = (request: { scope: string; key: string }) => `${request.scope}\n${request.key}`;

/** What take() works with: the table, the response key, and the batched insert of fresh keys. */
type KeyTable = {
  db: Kysely<DB>;
  aesKey: KeyObject;
  tryInsert: (request: IdempotencyRequest, now: Date, holder: string) => Promise<boolean>;
};

/** A fresh key to take, for insertMany. */
type Taking = { request: IdempotencyRequest; now: Date; holder: string };

/** Takes many fresh keys with one INSERT; true for each taken (false: the key exists already). */
async function insertMany(db: Kysely<DB>, items: Taking[]): Promise<boolean[]> {
  // A key twice in one batch: the first takes it, the second finds it taken.
  const unique = new Map<string, Taking>();
  for (const item of items) if (!unique.has(keyOf(item.request))) unique.set(keyOf(item.request), item);
  const fresh = [...unique.values()];
  // Nearly every POST: one text whatever the batch, prepared once per connection.
  const { rows: inserted } = await statement<{ scope: string; key: string }>('idempotency.take-keys')`
    insert into idempotency_keys (scope, key, operation, request_hash, state, created_at, expires_at, holder)
    select k.scope, k.key, k.operation, k.request_hash, 'in_progress', k.created_at, k.expires_at, k.holder
    from unnest(${fresh.map((f) => f.request.scope)}::text[], ${fresh.map((f) => f.request.key)}::uuid[],
      ${fresh.map((f) => f.request.operation)}::text[], ${fresh.map((f) => f.request.requestHash)}::text[],
      ${fresh.map((f) => f.now)}::timestamptz[], ${fresh.map((f) => expiresAt(f.now))}::timestamptz[],
      ${fresh.map((f) => f.holder)}::uuid[])
      as k(scope, key, operation, request_hash, created_at, expires_at, holder)
    on conflict (scope, key) do nothing
    returning scope, key`.execute(db);
  const taken = new Set(inserted.map(keyOf));
  return items.map(({ request }) => taken.delete(keyOf(request)));
}

/** Takes the key for a request, or says why not. */
async function take(
  keys: KeyTable,
  request: IdempotencyRequest,
  now: Date,
  holder: string,
): Promise<BeginResult> {
  const { db, tryInsert } = keys;
  const hold: KeyHold = { scope: request.scope, key: request.key, holder };
  if (await tryInsert(request, now, holder)) return { kind: 'started', hold };
  const row = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('scope', '=', request.scope)
    .where('key', '=', request.key)
    .executeTakeFirst();
  if (row === undefined) {
    // Deleted between our insert and read (expired and purged, or released): try once more.
    return (await tryInsert(request, now, holder)) ? { kind: 'started', hold } : { kind: 'in_progress' };
  }
  if (row.expires_at <= now) {
    // An expired key is a new key. Only one concurrent request may take it over.
    const taken = await db
      .updateTable('idempotency_keys')
      .set(freshState(request, now, holder))
      .where('scope', '=', request.scope)
      .where('key', '=', request.key)
      .where('created_at', '=', row.created_at)
      .executeTakeFirst();
    return taken.numUpdatedRows === 1n ? { kind: 'started', hold } : { kind: 'in_progress' };
  }
  if (row.operation !== request.operation || row.request_hash !== request.requestHash)
    return { kind: 'mismatch' };
  if (row.state === 'done' && row.response_status !== null && row.response_body !== null) {
    return {
      kind: 'replay',
      response: { status: row.response_status, body: open(keys.aesKey, row.response_body) },
    };
  }
  const staleBefore = new Date(now.getTime() - IDEMPOTENCY_STALE_SECONDS * 1000);
  if (row.created_at < staleBefore) {
    const taken = await db
      .updateTable('idempotency_keys')
      .set({ created_at: now, holder })
      .where('scope', '=', request.scope)
      .where('key', '=', request.key)
      .where('state', '=', 'in_progress')
      .where('created_at', '=', row.created_at)
      .executeTakeFirst();
    if (taken.numUpdatedRows === 1n) return { kind: 'started', hold };
  }
  return { kind: 'in_progress' };
}

/** Deletes holds that are still in progress under their own holder (a retry's hold stays). */
async function deleteHolds(db: Kysely<DB>, holds: KeyHold[]): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('state', '=', 'in_progress')
    .where((eb) =>
      eb.or(
        holds.map((hold) =>
          eb.and([eb('scope', '=', hold.scope), eb('key', '=', hold.key), eb('holder', '=', hold.holder)]),
        ),
      ),
    )
    .execute();
}

// Holds whose release did not reach the database (an outage). Their requests are over, answered
// 503: left alone, each key would stay "in progress" for IDEMPOTENCY_STALE_SECONDS and refuse the
// client's retry with 409 all that time. So this process, which knows they run no more, sends the
// releases again every RELEASE_RETRY_MS until the database takes them. Per store, not module
// state. Given up after the stale horizon (by then any retry takes the key over anyway) or on
// close; a process that dies with some leaves them to that horizon, as it leaves the keys it ran.
function releaseRetries(
  db: Kysely<DB>,
  options: IdempotencyStoreOptions,
): { later(hold: KeyHold): void; close(): void } {
  const unreleased = new Map<string, { hold: KeyHold; since: number }>();
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;

  function releaseLater(hold: KeyHold): void {
    if (closed) return;
    unreleased.set(`${keyOf(hold)}\n${hold.holder}`, { hold, since: performance.now() });
    retryTimer ??= setTimeout(() => void retryReleases(), RELEASE_RETRY_MS).unref();
  }

  async function retryReleases(): Promise<void> {
    const horizon = performance.now() - IDEMPOTENCY_STALE_SECONDS * 1000;
    for (const [id, entry] of unreleased) if (entry.since < horizon) unreleased.delete(id);
    const batch = [...unreleased].slice(0, RELEASE_RETRY_BATCH);
    try {
      if (batch.length > 0)
        await deleteHolds(
          db,
          batch.map(([, entry]) => entry.hold),
        );
      for (const [id] of batch) unreleased.delete(id);
    } catch (error) {
      // Still out of reach: the next round tries again. Any other failure is not this store's to
      // cure: those holds are left to the stale horizon.
      if (!isDatabaseUnavailable(error)) {
        for (const [id] of batch) unreleased.delete(id);
        options.onReleaseError?.(error);
      }
    }
    retryTimer = undefined;
    if (unreleased.size > 0 && !closed)
      retryTimer = setTimeout(() => void retryReleases(), RELEASE_RETRY_MS).unref();
  }

  return {
    later: releaseLater,
    close() {
      closed = true;
      clearTimeout(retryTimer);
      unreleased.clear();
    },
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;

/** A key completed with its response, the body sealed (encrypted at rest). */
export type KeyCompletion = { scope: string; key: string; status: number; sealedBody: string };

/**
 * Completes keys with one statement (the keys go in as arrays), in `db`'s transaction if any. Planned
 * each run, not prepared: idempotency_keys grows with every POST (src/db/prepared.ts).
 */
export async function writeCompletions(
  db: Kysely<DB> | Transaction<DB>,
  completions: KeyCompletion[],
): Promise<void> {
  await statement('idempotency.complete-keys')`
    update idempotency_keys as k
    set state = 'done', response_status = v.status, response_body = v.body
    from unnest(${completions.map((c) => c.scope)}::text[], ${completions.map((c) => c.key)}::uuid[],
      ${completions.map((c) => c.status)}::integer[], ${completions.map((c) => c.sealedBody)}::text[])
      as v(scope, key, status, body)
    where k.scope = v.scope and k.key = v.key`.execute(db);
}

/** The router's side of a key completed by the operation's own commit: the body it committed, if any. */
export type RouterCompletion = WithCommit & { committedBody(): string | undefined };

/**
 * The key's completion, handed to the operation as a write with its commit (db/unit-of-work.ts): an
 * operation that commits its result in its own transaction (a purchase's acceptance) completes the
 * key there, and the stored answer commits exactly with the change it reports.
 */
export function completionWithCommit(
  store: Pick<IdempotencyStore, 'sealed'>,
  request: IdempotencyRequest,
  successBody: (result: unknown) => string,
): RouterCompletion {
  let written: string | undefined;
  let committed: string | undefined;
  return {
    writeFor(result) {
      written = successBody(result);
      return { writer: writeCompletions, row: store.sealed(request, { status: 200, body: written }) };
    },
    committed() {
      committed = written;
    },
    committedBody: () => committed,
  };
}

export const idempotencyPurgeJob = defineJob('maintenance.purge-expired', noPayload);

/**
 * Idempotency keys are kept 24 h, then deleted. The router's table, so the router's job; the
 * composition root registers it beside the modules' jobs, since a worker-only process builds no app.
 */
export function idempotencyPurgeDefinition(db: Kysely<DB>, clock: Clock): JobDefinition<typeof noPayload> {
  return jobDefinition(idempotencyPurgeJob, {
    cron: '*/15 * * * *',
    retryLimit: 3,
    retryDelaySeconds: 30,
    expireInSeconds: 300,
    runOnClockAdvance: true,
    handler: async () => void (await purgeExpiredIdempotencyKeys(db, clock.now())),
  });
}

/**
 * Deletes up to batchMax keys past their 24 h (their replay window, API.md), oldest first, in one short
 * statement: retention.purge's batch (decision 0054). Answers how many.
 */
export async function purgeIdempotencyKeysBatch(
  db: Kysely<DB>,
  now: Date,
  batchMax: number,
): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('scope', 'key'),
        'in',
        selectFrom('idempotency_keys')
          .select(['scope', 'key'])
          .where('expires_at', '<=', now)
          .orderBy('expires_at')
          .limit(batchMax)
          .$asTuple('scope', 'key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function purgeExpiredIdempotencyKeys(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
