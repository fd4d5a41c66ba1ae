import assert from 'node:assert/strict';
import { createHmac, hkdfSync, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  DOCUMENT_URL_TTL_SECONDS,
  documentUrlKey,
  signDocumentUrl,
  verifyDocumentSignature,
} from '../../src/kyc/document-urls.ts';

// Signed document URLs: whoever holds one may read that one document until it expires; nothing
// else about it can be changed without the signature failing.

const key = documentUrlKey('a-test-pepper-of-some-length');
const now = new Date('2026-11-22T13:00:00.000Z');
const inTenMinutes = new Date(now.getTime() + DOCUMENT_URL_TTL_SECONDS * 1000);

/** The parts of a signed URL that the route reads. */
function parse(url: string): { documentId: string; expires: string; signature: string } {
  const parsed = new URL(url);
  const match = /^\/kyc\/documents\/([^/]+)$/.exec(parsed.pathname);
  assert.ok(match?.[1], `unexpected path ${parsed.pathname}`);
  assert.deepEqual([...parsed.searchParams.keys()], ['expires', 'signature']);
  return {
    documentId: match[1],
    expires: parsed.searchParams.get('expires')!,
    signature: parsed.searchParams.get('signature')!,
  };
}

function sign(documentId: string, expiresAt = inTenMinutes, signingKey = key) {
  return parse(
    signDocumentUrl({ baseUrl: 'https://api.example.com', documentId, expiresAt, key: signingKey }),
  );
}

describe('documentUrlKey', () => {
  it('derives a 32-byte key per pepper with HKDF-SHA-256, info "kyc-document-url"', () => {
    assert.equal(key.length, 32);
    const expected = hkdfSync(
      'sha256',
      'a-test-pepper-of-some-length',
      Buffer.alloc(0),
      'kyc-document-url',
      32,
    );
    assert.ok(key.equals(Buffer.from(expected)));
    assert.ok(documentUrlKey('a-test-pepper-of-some-length').equals(key));
    assert.ok(!documentUrlKey('another-pepper-of-some-length').equals(key));
    // Derived, not the pepper itself.
    assert.ok(!key.equals(Buffer.from('a-test-pepper-of-some-length').subarray(0, 32)));
  });
});

describe('signDocumentUrl', () => {
  it('builds the documented URL: HMAC-SHA-256 of "<id>.<expires>" in hex', () => {
    const id = randomUUID();
    const url = signDocumentUrl({ baseUrl: 'https://api.example.com/', documentId: id, expiresAt: now, key });
    const expires = String(now.getTime() / 1000);
    const signature = createHmac('sha256', key).update(`${id}.${expires}`).digest('hex');
    assert.equal(
      url,
      `https://api.example.com/kyc/documents/${id}?expires=${expires}&signature=${signature}`,
    );
  });

  it('rounds a fractional expiry down, never granting more time', () => {
    const { expires } = sign(randomUUID(), new Date(now.getTime() + 1999));
    assert.equal(Number(expires), now.getTime() / 1000 + 1);
  });
});

describe('verifyDocumentSignature', () => {
  const id = randomUUID();
  const signed = sign(id);

  it('accepts the URL it signed until it expires', () => {
    assert.equal(verifyDocumentSignature({ ...signed, key, now }), 'ok');
    const lastMoment = new Date(inTenMinutes.getTime() - 1);
    assert.equal(verifyDocumentSignature({ ...signed, key, now: lastMoment }), 'ok');
  });

  it('says expired once now reaches or passes expires', () => {
    assert.equal(verifyDocumentSignature({ ...signed, key, now: inTenMinutes }), 'expired');
    const later = new Date(inTenMinutes.getTime() + 1000);
    assert.equal(verifyDocumentSignature({ ...signed, key, now: later }), 'expired');
  });

  it('refuses a changed signature', () => {
    const last = signed.signature.at(-1) === '0' ? '1' : '0';
    const flipped = `${signed.signature.slice(0, -1)}${last}`;
    assert.equal(verifyDocumentSignature({ ...signed, signature: flipped, key, now }), 'invalid');
    assert.equal(
      verifyDocumentSignature({ ...signed, signature: signed.signature.toUpperCase(), key, now }),
      'invalid',
    );
  });

  it("refuses document A's URL used for document B", () => {
    const other = randomUUID();
    assert.equal(verifyDocumentSignature({ ...signed, documentId: other, key, now }), 'invalid');
    const otherSigned = sign(other);
    assert.equal(
      verifyDocumentSignature({ ...otherSigned, documentId: id, key, now }),
      'invalid',
      "B's signature on A",
    );
  });

  it('refuses a changed expires, shorter or longer', () => {
    for (const expires of [String(Number(signed.expires) + 1), String(Number(signed.expires) - 1)]) {
      assert.equal(verifyDocumentSignature({ ...signed, expires, key, now }), 'invalid', expires);
    }
  });

  it('refuses a signature made with another key', () => {
    const foreign = sign(id, inTenMinutes, documentUrlKey('another-pepper-of-some-length'));
    assert.equal(verifyDocumentSignature({ ...foreign, key, now }), 'invalid');
  });

  it('refuses a correctly signed URL that lives far longer than the TTL', () => {
    const longLived = sign(id, new Date(now.getTime() + 3_600_000));
    assert.equal(verifyDocumentSignature({ ...longLived, key, now }), 'invalid');
    // Once it is within the bound, the same URL is fine: only the lifetime was at fault.
    const later = new Date(now.getTime() + 3_600_000 - DOCUMENT_URL_TTL_SECONDS * 1000);
    assert.equal(verifyDocumentSignature({ ...longLived, key, now: later }), 'ok');
  });

  it('refuses garbage without throwing', () => {
    const garbage: Array<{ expires: string; signature: string }> = [
      { expires: '', signature: '' },
      { expires: signed.expires, signature: '' },
      { expires: '', signature: signed.signature },
      { expires: 'soon', signature: signed.signature },
      { expires: `${signed.expires}.0`, signature: signed.signature },
      { expires: `-${signed.expires}`, signature: signed.signature },
      { expires: '9'.repeat(400), signature: signed.signature },
      { expires: signed.expires, signature: 'zz'.repeat(32) },
      { expires: signed.expires, signature: signed.signature.slice(0, 62) },
      { expires: signed.expires, signature: `${signed.signature}00` },
      { expires: signed.expires, signature: Buffer.from(signed.signature, 'hex').toString('base64') },
    ];
    for (const parts of garbage) {
      assert.equal(
        verifyDocumentSignature({ documentId: id, ...parts, key, now }),
        'invalid',
        JSON.stringify(parts),
      );
    }
    assert.equal(verifyDocumentSignature({ ...signed, documentId: '', key, now }), 'invalid');
  });
});
