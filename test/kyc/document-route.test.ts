import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerDocumentRoute } from '../../src/http/document-route.ts';
import { newId } from '../../src/ids.ts';
import { DOCUMENT_URL_TTL_SECONDS, documentUrlKey, signDocumentUrl } from '../../src/kyc/document-urls.ts';
import type { DocumentStore } from '../../src/providers/storage/document-store.ts';
import { createLocalDocumentStore } from '../../src/providers/storage/local-store.ts';
import { createWorld, signIn, type World } from '../helpers/world.ts';

// GET /kyc/documents/:id over a real port: the exact bytes with headers that keep them private for a
// valid signed URL; 403 for anything expired or tampered with; 404 for what does not exist.

type Mime = 'image/jpeg' | 'image/png' | 'application/pdf';

describe('GET /kyc/documents/:id', () => {
  let world: World;
  let app: FastifyInstance;
  let baseUrl: string;
  let store: DocumentStore;
  let directory: string;
  let urlKey: Buffer;
  let userId: string;

  before(async () => {
    world = await createWorld();
    ({ userId } = await signIn(world));
    directory = mkdtempSync(path.join(tmpdir(), 'billrail-documents-'));
    store = createLocalDocumentStore(path.join(directory, 'kyc-documents'));
    urlKey = documentUrlKey(world.ctx.config.secrets.pepper);
    app = Fastify();
    registerDocumentRoute(app, { db: world.ctx.db, clock: world.ctx.clock, store, urlKey });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });

  after(async () => {
    await app?.close();
    await world?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  /** A document as submitTier3 leaves it: the bytes in the store, a row pointing at them. */
  async function insertDocument(bytes: Buffer, mimeType: Mime): Promise<string> {
    const id = newId();
    const storageKey = randomBytes(32).toString('hex');
    await store.put(storageKey, bytes, mimeType);
    await world.ctx.db
      .insertInto('kyc_documents')
      .values({
        id,
        user_id: userId,
        storage_key: storageKey,
        document_type: 'passport',
        mime_type: mimeType,
        size_bytes: bytes.length,
        sha256: 'not-checked-here',
        created_at: world.ctx.clock.now(),
      })
      .execute();
    return id;
  }

  /** A URL as getKycDocumentUrl hands it out: valid for the full TTL from the service's now. */
  function signedUrl(documentId: string): URL {
    const expiresAt = new Date(world.ctx.clock.now().getTime() + DOCUMENT_URL_TTL_SECONDS * 1000);
    return new URL(signDocumentUrl({ baseUrl, documentId, expiresAt, key: urlKey }));
  }

  async function assertError(response: Response, status: number, code: string): Promise<void> {
    assert.equal(response.status, status);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    const body = (await response.json()) as { success: boolean; error: { code: string; message: string } };
    assert.equal(body.success, false);
    assert.equal(body.error.code, code);
    if (code === 'FORBIDDEN') assert.match(body.error.message, /invalid or has expired/);
  }

  it('serves the exact bytes of a PNG with private, non-sniffable headers', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(32),
      randomBytes(50_000),
    ]);
    const id = await insertDocument(bytes, 'image/png');
    const response = await fetch(signedUrl(id));
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/png');
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('content-disposition'), 'inline; filename="document.png"');
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    const served = Buffer.from(await response.arrayBuffer());
    assert.equal(served.length, bytes.length);
    assert.ok(served.equals(bytes));
  });

  it('names JPEG and PDF documents by their type', async () => {
    for (const [mimeType, bytes, extension] of [
      ['image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0xff, 0xd9]), 'jpg'],
      ['application/pdf', Buffer.from('%PDF-1.4\n%%EOF\n', 'latin1'), 'pdf'],
    ] as const) {
      const id = await insertDocument(bytes, mimeType);
      const response = await fetch(signedUrl(id));
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), mimeType);
      assert.equal(response.headers.get('content-disposition'), `inline; filename="document.${extension}"`);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    }
  });

  it('refuses a tampered signature, a missing one, or a repeated parameter with 403', async () => {
    const id = await insertDocument(Buffer.from('%PDF-1.7 tamper'), 'application/pdf');
    const url = signedUrl(id);
    const signature = url.searchParams.get('signature')!;
    const tampered = new URL(url);
    tampered.searchParams.set('signature', `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`);
    await assertError(await fetch(tampered), 403, 'FORBIDDEN');

    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    await assertError(await fetch(unsigned), 403, 'FORBIDDEN');

    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    await assertError(await fetch(longer), 403, 'FORBIDDEN');

    const repeated = new URL(url);
    repeated.searchParams.append('signature', signature);
    await assertError(await fetch(repeated), 403, 'FORBIDDEN');

    // The untouched URL still works, so the 403s above came from the tampering.
    assert.equal((await fetch(url)).status, 200);
  });

  it("refuses another document's signature on this id with 403", async () => {
    const mine = await insertDocument(Buffer.from('%PDF-1.7 mine'), 'application/pdf');
    const other = await insertDocument(Buffer.from('%PDF-1.7 other'), 'application/pdf');
    const otherUrl = signedUrl(other);
    const swapped = new URL(otherUrl);
    swapped.pathname = `/kyc/documents/${mine}`;
    await assertError(await fetch(swapped), 403, 'FORBIDDEN');
    assert.equal((await fetch(otherUrl)).status, 200);
  });

  it('answers 404 for a validly signed id that has no document', async () => {
    await assertError(await fetch(signedUrl(randomUUID())), 404, 'NOT_FOUND');
  });

  it('answers 404 for an id that is not a UUID, signed or not', async () => {
    const notUuids = ['123', 'not-a-uuid', `${randomUUID()}x`, '..%2F..%2Fetc%2Fpasswd'];
    for (const id of notUuids) {
      const response = await fetch(`${baseUrl}/kyc/documents/${id}?expires=1&signature=${'0'.repeat(64)}`);
      await assertError(response, 404, 'NOT_FOUND');
    }
  });

  it('answers a bare 500 with an errorId when the row outlives its stored bytes', async () => {
    const id = await insertDocument(Buffer.from('%PDF-1.7 lost'), 'application/pdf');
    const row = await world.ctx.db
      .selectFrom('kyc_documents')
      .select('storage_key')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    rmSync(path.join(directory, 'kyc-documents', row.storage_key));
    const response = await fetch(signedUrl(id));
    assert.equal(response.status, 500);
    const body = (await response.json()) as { success: boolean; error: { code: string; errorId?: string } };
    assert.equal(body.error.code, 'INTERNAL');
    assert.equal(typeof body.error.errorId, 'string');
    assert.doesNotMatch(JSON.stringify(body), /storage|missing|kyc-documents/);
  });

  it('refuses an expired URL with 403 once the clock passes its expiry', async () => {
    const id = await insertDocument(Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0x00]), 'image/jpeg');
    const url = signedUrl(id);
    assert.equal((await fetch(url)).status, 200);
    world.ctx.sandboxClock!.advance(DOCUMENT_URL_TTL_SECONDS + 1);
    await assertError(await fetch(url), 403, 'FORBIDDEN');
    // A fresh URL for the same document works again: only the old one expired.
    assert.equal((await fetch(signedUrl(id))).status, 200);
  });
});
