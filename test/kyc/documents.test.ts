import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.ts';
import { DOCUMENT_BYTES_MAX, decodeDocument, sniffDocumentType } from '../../src/kyc/documents.ts';

// The tier-3 document: strict base64, a size limit, and a type read from the bytes themselves.

/** A JPEG's first bytes: SOI, then the APP0 (JFIF) segment header. */
const jpeg = Buffer.from([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01,
  0x00, 0x00, 0xff, 0xd9,
]);
/** A PNG signature followed by the start of its IHDR chunk (1x1). */
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
  ]),
]);
/** The smallest shape of a PDF: header, an empty body and the end marker. */
const pdf = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\ntrailer\n<<>>\n%%EOF\n', 'latin1');
const text = Buffer.from('Name: Ada Obi\nNIN: 12345678901\n', 'utf8');

/** Asserts that fn throws an AppError with this code and, for validation, this field path. */
function assertAppError(fn: () => unknown, code: string, path?: string[]): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (path !== undefined) {
      const issues = error.details?.issues as Array<{ path: string[] }> | undefined;
      assert.deepEqual(
        issues?.map((i) => i.path),
        [path],
      );
    }
    return true;
  });
}

describe('sniffDocumentType', () => {
  it('recognises JPEG, PNG and PDF by their magic bytes', () => {
    assert.equal(sniffDocumentType(jpeg), 'image/jpeg');
    assert.equal(sniffDocumentType(png), 'image/png');
    assert.equal(sniffDocumentType(pdf), 'application/pdf');
  });

  it('recognises nothing else, nor a truncated signature', () => {
    assert.equal(sniffDocumentType(text), null);
    assert.equal(sniffDocumentType(Buffer.alloc(0)), null);
    assert.equal(sniffDocumentType(png.subarray(0, 7)), null);
    assert.equal(sniffDocumentType(Buffer.from('%PDF', 'latin1')), null);
    assert.equal(sniffDocumentType(Buffer.from('GIF89a', 'latin1')), null);
    assert.equal(sniffDocumentType(Buffer.from([0xff, 0xd8, 0x00])), null);
  });
});

describe('decodeDocument', () => {
  it('decodes each accepted type and reports its SHA-256', () => {
    for (const [bytes, type] of [
      [jpeg, 'image/jpeg'],
      [png, 'image/png'],
      [pdf, 'application/pdf'],
    ] as const) {
      const decoded = decodeDocument(bytes.toString('base64'), type);
      assert.ok(decoded.bytes.equals(bytes));
      assert.equal(decoded.mimeType, type);
      assert.equal(decoded.sha256, createHash('sha256').update(bytes).digest('hex'));
    }
    // A known vector, so the digest is not only compared with itself.
    const abcPdf = Buffer.from('%PDF-abc', 'latin1');
    assert.equal(
      decodeDocument(abcPdf.toString('base64'), 'application/pdf').sha256,
      '1e8a7587529cc956d46dea481f38c623395a879a1179c277f476a9cdb88a540d',
    );
  });

  it('refuses a PNG declared as a JPEG, on documentMimeType', () => {
    assertAppError(() => decodeDocument(png.toString('base64'), 'image/jpeg'), 'VALIDATION_ERROR', [
      'data',
      'documentMimeType',
    ]);
    assertAppError(() => decodeDocument(pdf.toString('base64'), 'image/png'), 'VALIDATION_ERROR', [
      'data',
      'documentMimeType',
    ]);
  });

  it('refuses a text file whatever it is declared as, on documentMimeType', () => {
    for (const type of ['image/jpeg', 'image/png', 'application/pdf'] as const) {
      assertAppError(() => decodeDocument(text.toString('base64'), type), 'VALIDATION_ERROR', [
        'data',
        'documentMimeType',
      ]);
    }
  });

  it('refuses a data: URL, invalid or non-canonical base64, on documentBase64', () => {
    const valid = jpeg.toString('base64');
    const bad = [
      `data:image/jpeg;base64,${valid}`,
      '',
      `${valid}!`,
      `${valid.slice(0, 8)}\n${valid.slice(8)}`,
      ` ${valid}`,
      valid.slice(0, -1),
      // URL-safe alphabet.
      Buffer.from([0xff, 0xd8, 0xff, 0xfb, 0xef, 0xbe]).toString('base64url'),
      // Padding in the middle, and too much padding.
      `${valid.slice(0, 4)}==${valid.slice(6)}`,
      '/9j/4===',
      // Stray bits after the last byte: "/9j/" then "4B==" spells the same bytes as "4A==".
      `${Buffer.from([0xff, 0xd8, 0xff, 0xe0]).toString('base64').slice(0, -3)}B==`,
    ];
    for (const value of bad) {
      assertAppError(() => decodeDocument(value, 'image/jpeg'), 'VALIDATION_ERROR', [
        'data',
        'documentBase64',
      ]);
    }
  });

  it('accepts exactly 5 MiB and refuses one byte more as PAYLOAD_TOO_LARGE', () => {
    const max = Buffer.alloc(DOCUMENT_BYTES_MAX);
    pdf.copy(max);
    randomBytes(1024).copy(max, pdf.length);
    const decoded = decodeDocument(max.toString('base64'), 'application/pdf');
    assert.equal(decoded.bytes.length, 5 * 1024 * 1024);
    assert.ok(decoded.bytes.equals(max));
    assert.equal(decoded.sha256, createHash('sha256').update(max).digest('hex'));

    const over = Buffer.concat([max, Buffer.from([0])]);
    assertAppError(() => decodeDocument(over.toString('base64'), 'application/pdf'), 'PAYLOAD_TOO_LARGE');
  });
});
