import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { domainEventJob } from '../../src/events/domain-events.ts';
import { issuePaths } from '../auth/support.ts';
import {
  type ApiResponse,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  type World,
} from '../helpers/world.ts';

// Helpers shared by the tiered-KYC tests (tiers, tier 3 documents, admin review, guard and events):
// users at a given tier through the real operations, tiny real documents, and read-outs of the
// submissions, documents and domain-event jobs the service left in the database.

export type TierView = { tier: number; status: string; reason?: string; documentId?: string };
export type KycStatus = { tier: number; tiers: TierView[] };

export const FRESH_STATUS: KycStatus = {
  tier: 0,
  tiers: [
    { tier: 1, status: 'none' },
    { tier: 2, status: 'none' },
    { tier: 3, status: 'none' },
  ],
};

/** An 11-digit NIN the sandbox resolves to the caller's own name (not starting with 9, not all zeros). */
export function matchingNin(): string {
  return `1${String(randomBytes(6).readUIntBE(0, 6) % 10_000_000_000).padStart(10, '0')}`;
}

/** A 10-digit account number the sandbox resolves to "<LAST> <FIRST>" of the caller. */
export function matchingAccount(): string {
  return `0${String(randomBytes(6).readUIntBE(0, 6) % 1_000_000_000).padStart(9, '0')}`;
}

export const getStatus = async (world: World, user: SignedIn): Promise<KycStatus> =>
  ok(await get<KycStatus>(world, 'getKycStatus', {}, { token: user.accessToken }));

export const kycTierOfMe = async (world: World, user: SignedIn): Promise<number> =>
  ok(await get<{ kycTier: number }>(world, 'getMe', {}, { token: user.accessToken })).kycTier;

export const submitTier1 = (world: World, user: SignedIn, livenessToken: unknown = 'sandbox-pass') =>
  post<TierView>(world, 'submitKycTier1', { livenessToken }, { token: user.accessToken });

export const submitTier2 = (world: World, user: SignedIn, data: Record<string, unknown> = {}) =>
  post<TierView>(
    world,
    'submitKycTier2',
    { nin: matchingNin(), phone: user.phone, ...data },
    {
      token: user.accessToken,
    },
  );

export const submitTier3 = (world: World, user: SignedIn, data: Record<string, unknown> = {}) =>
  post<TierView>(world, 'submitKycTier3', tier3Input(data), { token: user.accessToken });

export function tier3Input(data: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    bankCode: '058',
    accountNumber: matchingAccount(),
    documentType: 'passport',
    documentBase64: pngDocument().toString('base64'),
    documentMimeType: 'image/png',
    ...data,
  };
}

/** A signed-in user with a profile name (the sandbox resolves NINs and accounts to it). */
export async function kycUser(
  world: World,
  names: { firstName: string; lastName: string } | null = { firstName: 'Adebayo', lastName: 'Ogunlesi' },
  phone?: string,
): Promise<SignedIn> {
  const user = phone === undefined ? await signIn(world) : await signIn(world, phone);
  if (names !== null) ok(await post(world, 'updateProfile', names, { token: user.accessToken }));
  return user;
}

/** A user whose tiers up to `tier` are approved through the real operations. */
export async function userAtTier(world: World, tier: 0 | 1 | 2, user?: SignedIn): Promise<SignedIn> {
  const me = user ?? (await kycUser(world));
  if (tier >= 1) assert.equal(ok(await submitTier1(world, me)).status, 'approved');
  if (tier >= 2) assert.equal(ok(await submitTier2(world, me)).status, 'approved');
  assert.equal(await kycTierOfMe(world, me), tier);
  return me;
}

/** The error of a failed response, checked against the expected HTTP status and code. */
export function expectError(response: ApiResponse, status: number, code: string) {
  const error = failure(response);
  assert.equal(error.status, status, JSON.stringify(error));
  assert.equal(error.code, code, JSON.stringify(error));
  return error;
}

/** A 400 VALIDATION_ERROR whose issues name exactly the given field path (e.g. data.nin). */
export function expectValidationAt(response: ApiResponse, path: string) {
  const error = expectError(response, 400, 'VALIDATION_ERROR');
  assert.ok(issuePaths(error.details).includes(path), JSON.stringify(error.details));
  return error;
}

export type SubmissionRow = {
  id: string;
  tier: number;
  status: string;
  reason: string | null;
  details: Record<string, unknown>;
  detailsText: string;
  document_id: string | null;
  decided_by: string | null;
  /** Tier 2: the NIN's keyed hash. */
  nin_hash: string | null;
};

/** The user's submissions, oldest first, with details also as the stored JSON text. */
export async function submissions(world: World, userId: string, tier?: number): Promise<SubmissionRow[]> {
  const result = await sql<SubmissionRow>`
    select id, tier, status, reason, details, details::text as "detailsText", document_id, decided_by,
      nin_hash
    from kyc_submissions
    where user_id = ${userId} and (${tier ?? null}::int is null or tier = ${tier ?? null}::int)
    order by created_at, id
  `.execute(world.ctx.db);
  return result.rows;
}

export async function documentCount(world: World, userId?: string): Promise<number> {
  let query = world.ctx.db.selectFrom('kyc_documents').select((eb) => eb.fn.countAll<string>().as('n'));
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

export type EventJob = { type: string; userId: string; tier: number; reason?: string; occurredAt: string };

/**
 * The domain events enqueued for a user (pg-boss jobs of the 'domain-event' queue) in the order they
 * happened (occurredAt: pg-boss's created_on is when the enqueueing transaction began).
 */
export async function eventJobs(world: World, userId: string): Promise<EventJob[]> {
  const result = await sql<{ data: EventJob }>`
    select data from pgboss.job
    where name = ${domainEventJob.name} and data->>'userId' = ${userId}
    order by data->>'occurredAt', created_on, id
  `.execute(world.ctx.db);
  return result.rows.map((r) => r.data);
}

/** Moves the service clock through the sandbox endpoint (which also runs the jobs that became due). */
export { advanceClock as advanceSandboxClock } from '../auth/support.ts';

// Tiny real documents. Each carries a few random bytes so that two uploads never look alike, and a
// served document can only be the one that was uploaded.

/** A 1x1 PNG (signature, IHDR, IDAT, IEND) followed by random bytes after IEND. */
export function pngDocument(): Buffer {
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  );
  return Buffer.concat([png, randomBytes(16)]);
}

/** SOI, a JFIF APP0 segment, a COM segment with random bytes, EOI. */
export function jpegDocument(): Buffer {
  const comment = randomBytes(16);
  const com = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, comment.length + 2]), comment]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    Buffer.from([
      0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
      0x00,
    ]),
    com,
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A one-page PDF with a random comment. */
export function pdfDocument(): Buffer {
  return Buffer.from(
    [
      '%PDF-1.4',
      `% ${randomBytes(8).toString('hex')}`,
      '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
      '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
      '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >> endobj',
      'trailer << /Root 1 0 R >>',
      '%%EOF',
      '',
    ].join('\n'),
    'latin1',
  );
}

/** A Promise with its resolve function, for waiting on something another callback reports. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
