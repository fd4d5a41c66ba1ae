import { createHash } from 'node:crypto';
import { AppError } from '../errors.ts';

// The identity document of tier 3 arrives as base64 inside JSON. It is decoded strictly, bounded in
// size, and its type is read from its own bytes: a declared type is a claim, the magic bytes are the
// fact, and a mislabelled file is refused rather than stored under a type it is not.

export const DOCUMENT_BYTES_MAX = 5 * 1024 * 1024;

export type DocumentMimeType = 'image/jpeg' | 'image/png' | 'application/pdf';

// Three fixed signatures are written out here rather than taken from a file-type library: we accept
// exactly three formats, each recognised by a short constant prefix, and a general detector would
// bring hundreds of formats (and its own parsing of untrusted bytes) to answer a three-way question.
const signatures: ReadonlyArray<{ mimeType: DocumentMimeType; magic: Buffer }> = [
  { mimeType: 'image/jpeg', magic: Buffer.from([0xff, 0xd8, 0xff]) },
  { mimeType: 'image/png', magic: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mimeType: 'application/pdf', magic: Buffer.from('%PDF-', 'latin1') },
];

/** The document type that the bytes begin with, or null when they are none of the three. */
export function sniffDocumentType(bytes: Buffer): DocumentMimeType | null {
  for (const { mimeType, magic } of signatures) {
    if (bytes.length >= magic.length && bytes.subarray(0, magic.length).equals(magic)) return mimeType;
  }
  return null;
}

const BASE64_PATH = ['data', 'documentBase64'];
const MIME_TYPE_PATH = ['data', 'documentMimeType'];

function invalid(path: string[], message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, { details: { issues: [{ path, message }] } });
}

/**
 * Decodes a document sent as standard base64 (RFC 4648 section 4, padded, no line breaks, no data:
 * URL prefix), checks its size and that its content is the declared type.
 * Throws AppError VALIDATION_ERROR or PAYLOAD_TOO_LARGE.
 */
export function decodeDocument(
  base64: string,
  declared: DocumentMimeType,
): { bytes: Buffer; mimeType: DocumentMimeType; sha256: string } {
  // Buffer.from(..., 'base64') skips whatever it does not understand, so it never fails: the
  // alphabet, the padding and the length are checked here, before anything is decoded.
  if (base64.length === 0) throw invalid(BASE64_PATH, 'the document is empty');
  if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) {
    throw invalid(BASE64_PATH, 'the document is not valid base64');
  }
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  const decodedBytes = (base64.length / 4) * 3 - padding;
  if (decodedBytes > DOCUMENT_BYTES_MAX) {
    throw new AppError('PAYLOAD_TOO_LARGE', `the document is larger than ${DOCUMENT_BYTES_MAX} bytes`, {
      details: { limit: DOCUMENT_BYTES_MAX },
    });
  }
  const bytes = Buffer.from(base64, 'base64');
  // Only the canonical encoding is accepted (no stray bits in the last character), so one document
  // has exactly one accepted spelling.
  if (bytes.length !== decodedBytes || bytes.toString('base64') !== base64) {
    throw invalid(BASE64_PATH, 'the document is not valid base64');
  }
  const sniffed = sniffDocumentType(bytes);
  if (sniffed === null) {
    throw invalid(MIME_TYPE_PATH, 'the document is not a JPEG, PNG or PDF file');
  }
  if (sniffed !== declared) {
    throw invalid(MIME_TYPE_PATH, `the document is ${sniffed}, not the declared ${declared}`);
  }
  return { bytes, mimeType: sniffed, sha256: createHash('sha256').update(bytes).digest('hex') };
}
