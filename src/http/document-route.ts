import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { verifyDocumentSignature } from '../kyc/document-urls.ts';
import { storedDocument } from '../kyc/service.ts';
import type { DocumentStore } from '../providers/storage/document-store.ts';
import { registerSignedLinkRoute } from './signed-link-route.ts';

// GET /kyc/documents/:id?expires=...&signature=... serves an identity document from the local store
// to whoever holds a URL that getKycDocumentUrl signed. The signature is the only credential (a
// browser opens the link without a bearer token), so it is checked before anything is looked up:
// without a valid one, nobody learns whether a document exists.

const extensions = { 'image/jpeg': 'jpg', 'image/png': 'png', 'application/pdf': 'pdf' } as const;

export function registerDocumentRoute(
  app: FastifyInstance,
  deps: { db: Kysely<DB>; clock: Clock; store: DocumentStore; urlKey: Buffer },
): void {
  registerSignedLinkRoute(app, {
    path: '/kyc/documents/:id',
    cacheControl: 'private, no-store',
    notFound: 'document not found',
    serve: async ({ id, expires, signature }, reply) => {
      const verdict = verifyDocumentSignature({
        documentId: id,
        expires,
        signature,
        key: deps.urlKey,
        now: deps.clock.now(),
      });
      if (verdict !== 'ok') throw new AppError('FORBIDDEN', 'this document link is invalid or has expired');
      const document = await storedDocument(deps.db, id);
      if (document === undefined) throw new AppError('NOT_FOUND', 'document not found');
      const bytes = await deps.store.get(document.storageKey);
      // A row whose object is gone is our fault, not the client's: a 500 with its errorId in the log.
      if (bytes === null) throw new Error(`the stored object of document ${id} is missing`);
      return reply
        .code(200)
        .header('content-type', document.mimeType)
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `inline; filename="document.${extensions[document.mimeType]}"`)
        .send(bytes);
    },
  });
}
