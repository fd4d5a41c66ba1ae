import {
  SIGNED_URL_TTL_SECONDS_MAX,
  signedUrlKey,
  signUrl,
  verifyUrlSignature,
} from '../shared/signed-urls.ts';

// Signed, short-lived URLs for identity documents kept in the local private directory
// (shared/signed-urls.ts): whoever holds the URL may read that one document until the expiry, and
// nobody can make or stretch a URL without the pepper.

export const DOCUMENT_URL_TTL_SECONDS = SIGNED_URL_TTL_SECONDS_MAX;

/** The HMAC key of document URLs, derived from the pepper for this purpose alone ("kyc-document-url"). */
export function documentUrlKey(pepper: string): Buffer {
  return signedUrlKey(pepper, 'kyc-document-url');
}

/** `${baseUrl}/kyc/documents/${documentId}?expires=<unix seconds>&signature=<hex HMAC-SHA-256>`. */
export function signDocumentUrl(args: {
  baseUrl: string;
  documentId: string;
  expiresAt: Date;
  key: Buffer;
}): string {
  return signUrl({
    baseUrl: args.baseUrl,
    path: '/kyc/documents',
    id: args.documentId,
    expiresAt: args.expiresAt,
    key: args.key,
  });
}

/**
 * Checks the expires and signature query parameters of a document URL. 'expired' only for a URL we
 * did sign whose time has passed; anything else that is not a valid URL of ours is 'invalid'.
 */
export function verifyDocumentSignature(args: {
  documentId: string;
  expires: string;
  signature: string;
  key: Buffer;
  now: Date;
}): 'ok' | 'expired' | 'invalid' {
  const { documentId, ...rest } = args;
  return verifyUrlSignature({ ...rest, id: documentId, ttlSeconds: DOCUMENT_URL_TTL_SECONDS });
}
