import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  advanceSandboxClock,
  documentCount,
  expectError,
  expectValidationAt,
  getStatus,
  jpegDocument,
  kycTierOfMe,
  pdfDocument,
  pngDocument,
  submissions,
  submitTier3,
  tier3Input,
  userAtTier,
} from './kyc-support.ts';

// Tier 3 through HTTP: a bank account whose name must match the profile and an ID document that is
// decoded strictly, typed by its own bytes, bounded in size, stored privately and served only through
// short-lived signed URLs (SPEC.md item 13, API.md sections 1 and 7).

type Mime = 'image/png' | 'image/jpeg' | 'application/pdf';
type DocumentUrl = { url: string; expiresAt: string };

const MiB = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe(`KYC tier 3 and its documents (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const documentUrl = (user: SignedIn, documentId: unknown) =>
    post<DocumentUrl>(world, 'getKycDocumentUrl', { documentId }, { token: user.accessToken });

  /** A user at tier 2 with a pending tier 3 holding the given document. */
  async function pendingUpload(
    bytes: Buffer = pngDocument(),
    mimeType: Mime = 'image/png',
  ): Promise<{ user: SignedIn; documentId: string; bytes: Buffer }> {
    const user = await userAtTier(world, 2);
    const view = ok(
      await submitTier3(world, user, {
        documentBase64: bytes.toString('base64'),
        documentMimeType: mimeType,
      }),
    );
    assert.equal(view.status, 'pending');
    assert.ok(view.documentId !== undefined);
    return { user, documentId: view.documentId, bytes };
  }

  async function expectForbidden(url: string | URL): Promise<void> {
    const response = await fetch(url);
    assert.equal(response.status, 403);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    const body = (await response.json()) as { success: boolean; error: { code: string } };
    assert.deepEqual([body.success, body.error.code], [false, 'FORBIDDEN']);
  }

  describe('submitKycTier3', () => {
    for (const [mimeType, make, documentType] of [
      ['image/png', pngDocument, 'passport'],
      ['image/jpeg', jpegDocument, 'drivers_licence'],
      ['application/pdf', pdfDocument, 'nin_slip'],
    ] as const) {
      it(`puts a ${mimeType} document with a matching account in review, and serves its exact bytes`, async () => {
        const user = await userAtTier(world, 2);
        const bytes = make();
        const accountNumber = '0123456789';
        const view = ok(
          await submitTier3(world, user, {
            accountNumber,
            documentType,
            documentBase64: bytes.toString('base64'),
            documentMimeType: mimeType,
          }),
        );
        assert.equal(view.tier, 3);
        assert.equal(view.status, 'pending');
        assert.equal(view.reason, undefined);
        assert.match(view.documentId ?? '', /^[0-9a-f-]{36}$/);
        const status = await getStatus(world, user);
        assert.equal(status.tier, 2);
        assert.deepEqual(status.tiers[2], view);
        assert.equal(await kycTierOfMe(world, user), 2);

        const document = await world.ctx.db
          .selectFrom('kyc_documents')
          .selectAll()
          .where('id', '=', view.documentId!)
          .executeTakeFirstOrThrow();
        assert.equal(document.user_id, user.userId);
        assert.equal(document.mime_type, mimeType);
        assert.equal(document.document_type, documentType);
        assert.equal(document.size_bytes, bytes.length);
        assert.equal(document.sha256, createHash('sha256').update(bytes).digest('hex'));
        const [row] = await submissions(world, user.userId, 3);
        assert.equal(row?.document_id, view.documentId);
        // The bank's name for the account is kept for the reviewer; the account number only by its end.
        assert.equal(row?.details.accountName, 'OGUNLESI ADEBAYO');
        assert.equal(row?.details.accountNumberLast4, '6789');
        assert.ok(!row?.detailsText.includes(accountNumber), row?.detailsText);

        const { url } = ok(await documentUrl(user, view.documentId));
        const response = await fetch(url);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('content-type'), mimeType);
        assert.equal(response.headers.get('cache-control'), 'private, no-store');
        assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
      });
    }

    it('rejects an account of someone else (starting with 9) and stores no document', async () => {
      const user = await userAtTier(world, 2);
      const before = await documentCount(world);
      const view = ok(await submitTier3(world, user, { accountNumber: '9012345678' }));
      assert.equal(view.status, 'rejected');
      assert.match(view.reason ?? '', /name/);
      assert.equal(view.documentId, undefined);
      assert.deepEqual((await getStatus(world, user)).tiers[2], view);
      assert.equal(await kycTierOfMe(world, user), 2);
      assert.equal(await documentCount(world, user.userId), 0);
      assert.equal(await documentCount(world), before);
      const [row] = await submissions(world, user.userId, 3);
      assert.equal(row?.document_id, null);
      assert.equal(row?.details.accountName, 'DANJUMA MUSA IBRAHIM');

      // A rejected tier 3 may be submitted again, and a matching account goes to review.
      const again = ok(await submitTier3(world, user));
      assert.equal(again.status, 'pending');
      assert.equal(await documentCount(world, user.userId), 1);
    });

    for (const [label, bytes, declared] of [
      ['a PNG declared as image/jpeg', pngDocument(), 'image/jpeg'],
      ['a JPEG declared as image/png', jpegDocument(), 'image/png'],
      ['a PDF declared as image/png', pdfDocument(), 'image/png'],
      [
        'plain text declared as application/pdf',
        Buffer.from('just some text, not a PDF\n'),
        'application/pdf',
      ],
      [
        'an HTML page declared as image/jpeg',
        Buffer.from('<html><script>alert(1)</script></html>'),
        'image/jpeg',
      ],
    ] as const) {
      it(`refuses ${label} with 400 at data.documentMimeType and stores nothing`, async () => {
        const user = await userAtTier(world, 2);
        expectValidationAt(
          await submitTier3(world, user, {
            documentBase64: bytes.toString('base64'),
            documentMimeType: declared,
          }),
          'data.documentMimeType',
        );
        assert.equal((await submissions(world, user.userId, 3)).length, 0);
        assert.equal(await documentCount(world, user.userId), 0);
      });
    }

    for (const [label, base64] of [
      ['characters outside the alphabet', 'iVBORw0KGgo*AAAA'],
      ['a data: URL prefix', `data:image/png;base64,${pngDocument().toString('base64')}`],
      ['a length that is not a multiple of 4', pngDocument().toString('base64').slice(0, -1)],
      [
        'line breaks',
        pngDocument()
          .toString('base64')
          .replace(/(.{16})/g, '$1\n'),
      ],
      ['URL-safe characters', `${PNG_SIGNATURE.toString('base64').slice(0, 8)}-_-_`],
    ]) {
      it(`refuses base64 with ${label} with 400 at data.documentBase64`, async () => {
        const user = await userAtTier(world, 2);
        expectValidationAt(await submitTier3(world, user, { documentBase64: base64 }), 'data.documentBase64');
        assert.equal((await submissions(world, user.userId, 3)).length, 0);
      });
    }

    it('refuses an unknown document type with 400 at data.documentType', async () => {
      const user = await userAtTier(world, 2);
      expectValidationAt(
        await submitTier3(world, user, { documentType: 'library_card' }),
        'data.documentType',
      );
    });

    it('accepts a document of exactly 5 MiB', async () => {
      const bytes = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(5 * MiB - PNG_SIGNATURE.length, 7)]);
      const { user, documentId } = await pendingUpload(bytes);
      const row = await world.ctx.db
        .selectFrom('kyc_documents')
        .select('size_bytes')
        .where('id', '=', documentId)
        .executeTakeFirstOrThrow();
      assert.equal(row.size_bytes, 5 * MiB);
      const response = await fetch(ok(await documentUrl(user, documentId)).url);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    });

    it('refuses a document one byte over 5 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const user = await userAtTier(world, 2);
      const bytes = Buffer.concat([PNG_SIGNATURE, Buffer.alloc(5 * MiB + 1 - PNG_SIGNATURE.length, 7)]);
      expectError(
        await submitTier3(world, user, { documentBase64: bytes.toString('base64') }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      assert.equal((await submissions(world, user.userId, 3)).length, 0);
      assert.equal(await documentCount(world, user.userId), 0);
    });

    it('refuses a request body over 8 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
      const user = await userAtTier(world, 2);
      const body = JSON.stringify({ data: tier3Input({ documentBase64: 'A'.repeat(8 * MiB + 4) }) });
      assert.ok(Buffer.byteLength(body) > 8 * MiB);
      const response = await fetch(`${world.baseUrl}/_serverFn/submitKycTier3`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.accessToken}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body,
      });
      assert.equal(response.status, 413);
      const parsed = (await response.json()) as { success: boolean; error: { code: string } };
      assert.deepEqual([parsed.success, parsed.error.code], [false, 'PAYLOAD_TOO_LARGE']);
      assert.equal((await submissions(world, user.userId, 3)).length, 0);
    });

    it('refuses a second submission while tier 3 waits for review with 409 CONFLICT', async () => {
      const { user, documentId } = await pendingUpload();
      const documents = await documentCount(world);
      expectError(await submitTier3(world, user), 409, 'CONFLICT');
      expectError(await submitTier3(world, user, { accountNumber: '9012345678' }), 409, 'CONFLICT');
      assert.equal(await documentCount(world), documents);
      const rows = await submissions(world, user.userId, 3);
      assert.deepEqual(
        rows.map((r) => [r.status, r.document_id]),
        [['pending', documentId]],
      );
    });
  });

  describe('getKycDocumentUrl and the signed URL', () => {
    it('signs a URL to the own document that expires at most 10 minutes ahead', async () => {
      const { user, documentId, bytes } = await pendingUpload(jpegDocument(), 'image/jpeg');
      const asked = world.ctx.clock.now().getTime();
      const { url, expiresAt } = ok(await documentUrl(user, documentId));
      const answered = world.ctx.clock.now().getTime();
      const expires = Date.parse(expiresAt);
      assert.ok(expires > answered, `${expiresAt} is not in the future`);
      assert.ok(expires <= answered + 600_000, `${expiresAt} is more than 10 minutes ahead`);
      // About the full 10 minutes (rounded down to the second), not a shorter lifetime.
      assert.ok(expires > asked + 599_000, `${expiresAt} is well under 10 minutes ahead`);
      const parsed = new URL(url);
      assert.equal(parsed.origin, new URL(world.baseUrl).origin);
      assert.equal(parsed.pathname, `/kyc/documents/${documentId}`);
      assert.equal(Number(parsed.searchParams.get('expires')) * 1000, expires);
      const response = await fetch(url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'image/jpeg');
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    });

    it("answers 404 for another user's document and for an unknown id", async () => {
      const { documentId } = await pendingUpload();
      const stranger = await userAtTier(world, 2);
      expectError(await documentUrl(stranger, documentId), 404, 'NOT_FOUND');
      const fresh = await signIn(world);
      expectError(await documentUrl(fresh, documentId), 404, 'NOT_FOUND');
      expectError(await documentUrl(stranger, randomUUID()), 404, 'NOT_FOUND');
      expectValidationAt(await documentUrl(stranger, 'not-a-uuid'), 'data.documentId');
      expectError(await post(world, 'getKycDocumentUrl', { documentId }), 401, 'UNAUTHENTICATED');
    });

    it('refuses a URL with a tampered signature with 403', async () => {
      const { user, documentId } = await pendingUpload(pdfDocument(), 'application/pdf');
      const url = new URL(ok(await documentUrl(user, documentId)).url);
      const signature = url.searchParams.get('signature')!;
      const flipped = signature[10] === 'a' ? 'b' : 'a';
      const tampered = new URL(url);
      tampered.searchParams.set('signature', `${signature.slice(0, 10)}${flipped}${signature.slice(11)}`);
      await expectForbidden(tampered);
      const stretched = new URL(url);
      stretched.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 60));
      await expectForbidden(stretched);
      // The untouched URL works: the 403s came from the tampering.
      assert.equal((await fetch(url)).status, 200);
    });

    it("refuses document A's signature on document B's id with 403", async () => {
      const a = await pendingUpload();
      const b = await pendingUpload();
      const urlA = new URL(ok(await documentUrl(a.user, a.documentId)).url);
      const swapped = new URL(urlA);
      swapped.pathname = `/kyc/documents/${b.documentId}`;
      await expectForbidden(swapped);
      assert.ok(Buffer.from(await (await fetch(urlA)).arrayBuffer()).equals(a.bytes));
    });

    it('stops serving a URL once 601 seconds have passed; a new URL works', async () => {
      const { user, documentId, bytes } = await pendingUpload();
      const old = ok(await documentUrl(user, documentId)).url;
      assert.equal((await fetch(old)).status, 200);
      await advanceSandboxClock(world, 601);
      await expectForbidden(old);
      const fresh = ok(await documentUrl(user, documentId)).url;
      assert.notEqual(fresh, old);
      const response = await fetch(fresh);
      assert.equal(response.status, 200);
      assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    });
  });
});
