import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB, KycSubmissionsTable } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { type DomainEvent, publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { toE164 } from '../phone.ts';
import { type KycProvider, KycProviderUnavailableError } from '../providers/kyc/kyc-provider.ts';
import type { DocumentStore } from '../providers/storage/document-store.ts';
import { type HashKeys, keyedHash } from '../shared/keyed-hash.ts';
import { DOCUMENT_URL_TTL_SECONDS, signDocumentUrl } from './document-urls.ts';
import { type DocumentMimeType, decodeDocument } from './documents.ts';
import { assertCheckOpen, livenessTokenHash, SANDBOX_LIVENESS_TOKENS, useCheck } from './liveness-checks.ts';
import { matchProfileToFullName, matchProfileToRecord, type PersonName } from './names.ts';

// Tiered KYC (SPEC.md 13): Tier 1 face liveness, Tier 2 NIN with the account's phone, Tier 3 bank
// account and ID document (decided by an admin). Tiers are strictly sequential; a tier can be
// submitted again after a rejection, never after an approval. Provider calls happen before any
// write and with timeouts, so a slow provider answers 502 and changes nothing.

export type KycStatus = 'none' | 'pending' | 'approved' | 'rejected';
/** What refused a submission with 409 CONFLICT: `details.reason` (API.md section 7). */
export type KycConflictReason =
  | 'tier_approved'
  | 'tier_pending'
  | 'submitted_concurrently'
  | 'profile_name_missing'
  | 'nin_in_use'
  | 'check_used';
export type KycTierView = { tier: number; status: KycStatus; reason?: string; documentId?: string };

export type KycDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  provider: KycProvider;
  store: DocumentStore;
  /** SECRET_PEPPER, and the previous one while a rotation lasts (decision 0035). */
  pepper: HashKeys;
  /** The banks Tier 3 accepts (listBanks): the payment provider's list, cached. */
  banks: () => Promise<readonly { code: string }[]>;
  /** Auth's users: the rows read, and the row lock, tier and verified names written in a decision's transaction. */
  users: Pick<
    AuthApi,
    'findUserById' | 'findUsersByIds' | 'kycTierOf' | 'lockUser' | 'setKycTier' | 'setVerifiedName'
  >;
};

type Submission = Selectable<KycSubmissionsTable>;

const TIERS = [1, 2, 3] as const;
type Tier = (typeof TIERS)[number];

const toView = (s: Submission): KycTierView => ({
  tier: s.tier,
  status: s.status,
  ...(s.reason !== null ? { reason: s.reason } : {}),
  ...(s.document_id !== null ? { documentId: s.document_id } : {}),
});

async function latestSubmissions(db: Kysely<DB>, userId: string): Promise<Map<number, Submission>> {
  const rows = await db
    .selectFrom('kyc_submissions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const latest = new Map<number, Submission>();
  for (const row of rows) if (!latest.has(row.tier)) latest.set(row.tier, row);
  return latest;
}

export async function getKycStatus(
  db: Kysely<DB>,
  userId: string,
): Promise<{ tier: number; tiers: KycTierView[] }> {
  const latest = await latestSubmissions(db, userId);
  const tiers = TIERS.map((tier) => {
    const s = latest.get(tier);
    return s === undefined ? { tier, status: 'none' as const } : toView(s);
  });
  // The approved tier is the highest of an unbroken run of approvals from Tier 1.
  let approved = 0;
  for (const view of tiers) {
    if (view.status !== 'approved') break;
    approved = view.tier;
  }
  return { tier: approved, tiers };
}

/**
 * A submission's 409, with `details.reason` saying which state refused it (API.md section 7): the
 * code alone cannot tell a person whether their NIN is on another account or their name is missing.
 */
const conflict = (reason: KycConflictReason, message: string) =>
  new AppError('CONFLICT', message, { details: { reason } });

/** Refuses a submission the tier's state does not allow, before any provider is asked. */
async function assertCanSubmit(db: Kysely<DB>, userId: string, tier: Tier): Promise<void> {
  const latest = await latestSubmissions(db, userId);
  if (tier > 1 && latest.get(tier - 1)?.status !== 'approved') {
    throw new AppError('KYC_PREVIOUS_TIER_REQUIRED', `tier ${tier - 1} must be approved first`, {
      details: { requiredTier: tier - 1 },
    });
  }
  const current = latest.get(tier)?.status;
  if (current === 'approved') throw conflict('tier_approved', `tier ${tier} is already approved`);
  if (current === 'pending') throw conflict('tier_pending', `tier ${tier} is already waiting for review`);
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === '23505';

type Decision = {
  status: 'approved' | 'rejected' | 'pending';
  reason?: string;
  details: Record<string, unknown>;
  documentId?: string;
  /** Tier 2: the NIN's keyed hash, which one account at a time may hold (pending or approved). */
  ninHash?: string;
};

/**
 * Records a decided or pending submission, moves the user's tier on approval and publishes the
 * decision, all in one transaction. A user's decisions are recorded one at a time (the user row is
 * locked) and the tier's state is checked again under that lock: otherwise a rejection racing an
 * approval of the same tier, which the unique index does not stop, could be recorded after it and
 * hide it. A concurrent submission of the same tier gets 409.
 */
async function record(
  deps: KycDeps,
  userId: string,
  tier: Tier,
  decision: Decision,
  extra?: (trx: Transaction<DB>) => Promise<void>,
): Promise<KycTierView> {
  try {
    const row = await deps.db.transaction().execute(async (trx) => {
      await deps.users.lockUser(trx, userId);
      await assertCanSubmit(trx, userId, tier);
      // Read under the lock, so that created_at orders a user's submissions as they were decided.
      const now = deps.clock.now();
      await extra?.(trx);
      const inserted = await trx
        .insertInto('kyc_submissions')
        .values({
          id: newId(),
          user_id: userId,
          tier,
          status: decision.status,
          reason: decision.reason ?? null,
          details: JSON.stringify(decision.details),
          document_id: decision.documentId ?? null,
          nin_hash: decision.ninHash ?? null,
          created_at: now,
          decided_at: decision.status === 'pending' ? null : now,
          decided_by: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      if (decision.status !== 'pending') await applyDecision(deps, trx, inserted, now);
      return inserted;
    });
    return toView(row);
  } catch (error) {
    if (isUniqueViolation(error)) {
      // Another account's submission of the same NIN committed first (kyc_submissions_one_nin_idx).
      if (decision.ninHash !== undefined && (await ninHeldElsewhere(deps.db, userId, [decision.ninHash])))
        throw ninTaken();
      throw conflict('submitted_concurrently', `tier ${tier} was submitted at the same time`);
    }
    throw error;
  }
}

async function applyDecision(
  deps: Pick<KycDeps, 'jobs' | 'users'>,
  trx: Transaction<DB>,
  s: Submission,
  now: Date,
): Promise<void> {
  const event: DomainEvent =
    s.status === 'approved'
      ? { type: 'kyc.tier_approved', userId: s.user_id, tier: s.tier, occurredAt: now.toISOString() }
      : {
          type: 'kyc.tier_rejected',
          userId: s.user_id,
          tier: s.tier,
          reason: s.reason ?? '',
          occurredAt: now.toISOString(),
        };
  if (s.status === 'approved') await deps.users.setKycTier(trx, s.user_id, s.tier, now);
  await publishEvent(deps.jobs, trx, event);
}

async function askProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof KycProviderUnavailableError) {
      throw new AppError('UPSTREAM_UNAVAILABLE', 'the identity provider could not be reached; try again');
    }
    throw error;
  }
}

async function userOf(deps: Pick<KycDeps, 'users'>, userId: string) {
  const user = await deps.users.findUserById(userId);
  if (user === undefined) throw notFound('user');
  return user;
}

/**
 * The profile's names, which Tier 2 and 3 compare with the provider's record. Asked for after the
 * tier order (assertCanSubmit): a person who may not submit this tier yet is told which tier comes
 * first, not to add a name for a submission that would still be refused.
 */
function profileName(user: Awaited<ReturnType<typeof userOf>>) {
  if (user.first_name === null || user.last_name === null) {
    throw conflict(
      'profile_name_missing',
      'add your first and last name to your profile first (updateProfile)',
    );
  }
  return { firstName: user.first_name, lastName: user.last_name };
}

/**
 * Tier 1: a face check's liveness token. A token from the provider's page counts only with the state
 * of a check the caller started (liveness-checks.ts), checked before the provider is asked and used
 * up in the deciding transaction. The sandbox's magic tokens need no state, with the sandbox on.
 */
export async function submitTier1(
  deps: KycDeps,
  userId: string,
  input: { livenessToken: string; state?: string | undefined },
  options: { sandboxTokens: boolean },
): Promise<KycTierView> {
  const { livenessToken, state } = input;
  await assertCanSubmit(deps.db, userId, 1);
  // A magic token serves everyone, so it is never kept as spent; with a state, the check is used.
  const magic = options.sandboxTokens && SANDBOX_LIVENESS_TOKENS.includes(livenessToken);
  const tokenHash = magic ? null : livenessTokenHash(deps.pepper.current.secret, livenessToken);
  if (!magic || state !== undefined)
    await assertCheckOpen(deps.db, deps.clock.now(), userId, state, tokenHash);
  const result = await askProvider(() => deps.provider.verifyLiveness(livenessToken));
  if (result.status === 'unknown_token') {
    throw new AppError('VALIDATION_ERROR', 'the liveness token is unknown, used or expired', {
      details: { issues: [{ path: ['data', 'livenessToken'], message: 'not a valid liveness token' }] },
    });
  }
  const useIt =
    state === undefined
      ? undefined
      : (trx: Transaction<DB>) => useCheck(trx, deps.clock.now(), userId, state, tokenHash);
  return result.status === 'passed'
    ? record(deps, userId, 1, { status: 'approved', details: { livenessReference: result.reference } }, useIt)
    : record(
        deps,
        userId,
        1,
        {
          status: 'rejected',
          reason: `liveness check failed: ${result.reason}`,
          details: { livenessReference: result.reference },
        },
        useIt,
      );
}

/** An NIN pending or approved on an account other than this one. */
async function ninHeldElsewhere(db: Kysely<DB>, userId: string, ninHashes: string[]): Promise<boolean> {
  const held = await db
    .selectFrom('kyc_submissions')
    .select('id')
    .where('nin_hash', 'in', ninHashes)
    .where('status', 'in', ['pending', 'approved'])
    // A closed account's submissions are kept but hold their NIN no longer (account-closure.ts).
    .where('identity_released_at', 'is', null)
    .where('user_id', '<>', userId)
    .limit(1)
    .executeTakeFirst();
  return held !== undefined;
}

const ninTaken = () =>
  conflict(
    'nin_in_use',
    'this NIN is already verified on another account: one NIN verifies one person, on one account',
  );

/**
 * Tier 2: an NIN whose record carries the profile's name and, where the record has a phone, the
 * phone given (the account's own). One NIN verifies one account: an NIN held by another account is
 * refused with 409 before the provider is asked and again under the user's lock, and the unique
 * index on the hash settles submissions of one NIN by several accounts at once. The names that
 * matched become the verified profile names in the approving transaction.
 */
export async function submitTier2(
  deps: KycDeps,
  userId: string,
  input: { nin: string; phone: string },
): Promise<KycTierView> {
  const user = await userOf(deps, userId);
  if (input.phone !== user.phone) {
    throw new AppError('VALIDATION_ERROR', 'the phone must be the one this account signed in with', {
      details: { issues: [{ path: ['data', 'phone'], message: 'not the phone of this account' }] },
    });
  }
  await assertCanSubmit(deps.db, userId, 2);
  const { firstName, lastName } = profileName(user);
  // The NIN itself is kept only as a keyed hash (kyc_submissions.nin_hash: one NIN, one account) and
  // its last 4 (in details).
  const ninHash = keyedHash(deps.pepper.current.secret, 'nin', 'NG', input.nin);
  // While a rotation of the pepper lasts, a NIN verified before it is held under the previous key.
  const ninHashes = [deps.pepper.current, deps.pepper.previous].flatMap((key) =>
    key === undefined ? [] : [keyedHash(key.secret, 'nin', 'NG', input.nin)],
  );
  if (await ninHeldElsewhere(deps.db, userId, ninHashes)) throw ninTaken();
  const lookup = await askProvider(() => deps.provider.lookupNin({ nin: input.nin, firstName, lastName }));
  const details: Record<string, unknown> = { ninLast4: input.nin.slice(-4), phone: input.phone };
  const decide = (decision: Omit<Decision, 'details' | 'ninHash'>) =>
    record(deps, userId, 2, { ...decision, details, ninHash });
  if (!lookup.found) return decide({ status: 'rejected', reason: 'no NIN record was found' });
  const { record: nin } = lookup;
  details.ninName = { firstName: nin.firstName, middleName: nin.middleName, lastName: nin.lastName };
  const match = matchProfileToRecord({ firstName, lastName }, nin);
  if (!match.match) {
    return decide({
      status: 'rejected',
      reason: 'the name on the NIN record does not match your profile name',
    });
  }
  // Compared in E.164; a record phone that is no Nigerian mobile number cannot be the one given.
  if (nin.phone !== null && toE164(nin.phone) !== input.phone) {
    details.ninPhoneLast4 = nin.phone.slice(-4);
    return decide({
      status: 'rejected',
      reason: 'the phone number on the NIN record is not the phone of this account',
    });
  }
  return record(deps, userId, 2, { status: 'approved', details, ninHash }, async (trx) => {
    // Under the user's lock: held since the first check, or by an account that committed meanwhile.
    if (await ninHeldElsewhere(trx, userId, ninHashes)) throw ninTaken();
    await deps.users.setVerifiedName(trx, userId, { firstName, lastName }, deps.clock.now());
  });
}

/**
 * The name on the NIN record of the user's approved Tier 2, as the identity provider gave it, or
 * null when Tier 2 is not approved. Other domains (dedicated accounts) read it through here.
 */
export async function approvedNinName(db: Kysely<DB>, userId: string): Promise<PersonName | null> {
  const latest = (await latestSubmissions(db, userId)).get(2);
  if (latest?.status !== 'approved') return null;
  const details = (typeof latest.details === 'string' ? JSON.parse(latest.details) : latest.details) as {
    ninName?: { firstName?: unknown; middleName?: unknown; lastName?: unknown };
  } | null;
  const name = details?.ninName;
  if (typeof name?.firstName !== 'string' || typeof name.lastName !== 'string') return null;
  return {
    firstName: name.firstName,
    middleName: typeof name.middleName === 'string' ? name.middleName : null,
    lastName: name.lastName,
  };
}

export type Tier3Input = {
  bankCode: string;
  accountNumber: string;
  documentType: 'passport' | 'drivers_licence' | 'voters_card' | 'nin_slip';
  documentBase64: string;
  documentMimeType: DocumentMimeType;
};

export async function submitTier3(deps: KycDeps, userId: string, input: Tier3Input): Promise<KycTierView> {
  // The document is checked first: a bad upload costs no provider call.
  const document = decodeDocument(input.documentBase64, input.documentMimeType);
  // A code the bank list does not hold names no bank a person can pick (listBanks): refused before
  // anything is stored or any provider asked about the account.
  if (!(await deps.banks()).some((bank) => bank.code === input.bankCode)) {
    const message = 'not the code of a bank in listBanks';
    throw new AppError('VALIDATION_ERROR', 'no such bank', {
      details: { issues: [{ path: ['data', 'bankCode'], message }] },
    });
  }
  await assertCanSubmit(deps.db, userId, 3);
  const { firstName, lastName } = profileName(await userOf(deps, userId));
  const lookup = await askProvider(() =>
    deps.provider.lookupBankAccount({
      bankCode: input.bankCode,
      accountNumber: input.accountNumber,
      firstName,
      lastName,
    }),
  );
  const details: Record<string, unknown> = {
    bankCode: input.bankCode,
    accountNumberLast4: input.accountNumber.slice(-4),
  };
  if (!lookup.found)
    return record(deps, userId, 3, { status: 'rejected', reason: 'the bank account was not found', details });
  details.accountName = lookup.accountName;
  if (!matchProfileToFullName({ firstName, lastName }, lookup.accountName).match) {
    return record(deps, userId, 3, {
      status: 'rejected',
      reason: 'the bank account name does not match your profile name',
      details,
    });
  }
  // Stored before the row that points at it: a failure in between leaves an unreferenced object,
  // never a row without its document.
  const storageKey = randomBytes(32).toString('hex');
  await deps.store.put(storageKey, document.bytes, document.mimeType);
  const documentId = newId();
  return record(deps, userId, 3, { status: 'pending', details, documentId }, async (trx) => {
    await trx
      .insertInto('kyc_documents')
      .values({
        id: documentId,
        user_id: userId,
        storage_key: storageKey,
        document_type: input.documentType,
        mime_type: document.mimeType,
        size_bytes: document.bytes.length,
        sha256: document.sha256,
        created_at: deps.clock.now(),
      })
      .execute();
  });
}

/** A signed URL for one document, valid at most 10 minutes: the owner's, or any for an admin. */
export async function documentUrl(
  deps: Pick<KycDeps, 'db' | 'clock' | 'store'> & { baseUrl: string; urlKey: Buffer },
  caller: { userId: string; isAdmin: boolean },
  documentId: string,
): Promise<{ url: string; expiresAt: string }> {
  const document = await deps.db
    .selectFrom('kyc_documents')
    .select(['id', 'user_id', 'storage_key'])
    .where('id', '=', documentId)
    .executeTakeFirst();
  // Another user's document is "not found", never "forbidden": its existence is not disclosed.
  if (document === undefined || (document.user_id !== caller.userId && !caller.isAdmin))
    throw notFound('document');
  // Whole seconds, as in the signed URL, so the expiresAt we report is exactly when it stops working.
  const expiresAt = new Date(
    Math.floor(deps.clock.now().getTime() / 1000) * 1000 + DOCUMENT_URL_TTL_SECONDS * 1000,
  );
  const presigned = await deps.store.presignedUrl(document.storage_key, DOCUMENT_URL_TTL_SECONDS);
  const url =
    presigned ??
    signDocumentUrl({ baseUrl: deps.baseUrl, documentId: document.id, expiresAt, key: deps.urlKey });
  return { url, expiresAt: expiresAt.toISOString() };
}

export type KycReview = {
  submissionId: string;
  userId: string;
  phone: string;
  firstName: string | null;
  lastName: string | null;
  tier: number;
  status: 'pending' | 'approved' | 'rejected';
  reason: string | null;
  details: Record<string, unknown>;
  documentId: string | null;
  createdAt: string;
  decidedAt: string | null;
};

export async function listReviews(
  deps: Pick<KycDeps, 'db' | 'users'>,
  filter: { status: 'pending' | 'approved' | 'rejected'; limit: number; offset: number },
): Promise<{ items: KycReview[]; total: number }> {
  const base = deps.db.selectFrom('kyc_submissions').where('status', '=', filter.status);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      // The oldest pending first: a review queue is worked in arrival order.
      .orderBy('created_at', filter.status === 'pending' ? 'asc' : 'desc')
      .orderBy('id')
      .limit(filter.limit)
      .offset(filter.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  const users = await deps.users.findUsersByIds([...new Set(rows.map((r) => r.user_id))]);
  const items = rows.map((r) => {
    const user = users.get(r.user_id);
    return {
      submissionId: r.id,
      userId: r.user_id,
      phone: user?.phone ?? '',
      firstName: user?.first_name ?? null,
      lastName: user?.last_name ?? null,
      tier: r.tier,
      status: r.status,
      reason: r.reason,
      details: r.details as Record<string, unknown>,
      documentId: r.document_id,
      createdAt: r.created_at.toISOString(),
      decidedAt: r.decided_at?.toISOString() ?? null,
    };
  });
  return { items, total: Number(count.n) };
}

export async function reviewSubmission(
  deps: Pick<KycDeps, 'db' | 'clock' | 'jobs' | 'users'>,
  adminId: string,
  input: { userId: string; tier: number; decision: 'approve' | 'reject'; reason?: string | undefined },
): Promise<KycTierView> {
  if (input.decision === 'reject' && (input.reason === undefined || input.reason.trim() === '')) {
    throw new AppError('VALIDATION_ERROR', 'a rejection needs a reason the user will see', {
      details: { issues: [{ path: ['data', 'reason'], message: 'required when rejecting' }] },
    });
  }
  const now = deps.clock.now();
  const decided = await deps.db.transaction().execute(async (trx) => {
    const pending = await trx
      .selectFrom('kyc_submissions')
      .selectAll()
      .where('user_id', '=', input.userId)
      .where('tier', '=', input.tier)
      .where('status', '=', 'pending')
      .forUpdate()
      .executeTakeFirst();
    if (pending === undefined) {
      // A tier that was submitted and decided (with no newer submission waiting) is a conflict
      // with its state, not a missing record: 404 stays for an unknown user or a tier never sent.
      const latest = await trx
        .selectFrom('kyc_submissions')
        .select('status')
        .where('user_id', '=', input.userId)
        .where('tier', '=', input.tier)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (latest === undefined) throw notFound('pending submission');
      throw new AppError(
        'CONFLICT',
        `tier ${input.tier} is already ${latest.status}; nothing waits for review`,
      );
    }
    const updated = await trx
      .updateTable('kyc_submissions')
      .set({
        status: input.decision === 'approve' ? 'approved' : 'rejected',
        reason: input.decision === 'reject' ? (input.reason ?? null) : null,
        decided_at: now,
        decided_by: adminId,
      })
      .where('id', '=', pending.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await applyDecision(deps, trx, updated, now);
    return updated;
  });
  return toView(decided);
}

/** What the document route needs to serve a document it has already verified the signature of. */
export async function storedDocument(
  db: Kysely<DB>,
  documentId: string,
): Promise<{ storageKey: string; mimeType: DocumentMimeType } | undefined> {
  const row = await db
    .selectFrom('kyc_documents')
    .select(['storage_key', 'mime_type'])
    .where('id', '=', documentId)
    .executeTakeFirst();
  return row === undefined ? undefined : { storageKey: row.storage_key, mimeType: row.mime_type };
}
