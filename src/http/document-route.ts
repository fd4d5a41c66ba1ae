import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { verifyDocumentSignature } from '../kyc/document-urls.ts';
import { storedDocument } from '../kyc/service.ts';
import type { DocumentStore } from '../providers/storage/document-store.ts';
import { sendError, toErrorResponse } from './errors.ts';

// GET /kyc/documents/:id?expires=...&signature=... serves an identity document from the local store
// to whoever holds a URL that getKycDocumentUrl signed. The signature is the only credential (a
// browser opens the link without a bearer token), so it is checked before anything is looked up:
// without a valid one, nobody learns whether a document exists.

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const extensions = { 'image/jpeg': 'jpg', 'image/png': 'png', 'application/pdf': 'pdf' } as const;

export function registerDocumentRoute(
  app: FastifyInstance,
  deps: { db: Kysely<DB>; clock: Clock; store: DocumentStore; urlKey: Buffer },
): void {
  app.get('/kyc/documents/:id', { schema: { hide: true } }, async (request, reply) => {
    // Neither the error responses nor the document may be kept by a cache or leak through a Referer.
    reply.header('cache-control', 'private, no-store');
    reply.header('referrer-policy', 'no-referrer');
    const fail = (error: unknown): FastifyReply => sendError(reply, toErrorResponse(error, request));
    try {
      const { id } = request.params as { id: string };
      if (!UUID_PATTERN.test(id)) return fail(new AppError('NOT_FOUND', 'document not found'));
      // A repeated parameter arrives as an array: only one plain value of each is accepted.
      const query = request.query as Record<string, unknown>;
      const verdict = verifyDocumentSignature({
        documentId: id,
        expires: typeof query.expires === 'string' ? query.expires : '',
        signature: typeof query.signature === 'string' ? query.signature : '',
        key: deps.urlKey,
        now: deps.clock.now(),
      });
      if (verdict !== 'ok') {
        return fail(new AppError('FORBIDDEN', 'this document link is invalid or has expired'));
      }
      const document = await storedDocument(deps.db, id);
      if (document === undefined) return fail(new AppError('NOT_FOUND', 'document not found'));
      const bytes = await deps.store.get(document.storageKey);
      // A row whose object is gone is our fault, not the client's: a 500 with its errorId in the log.
      if (bytes === null) throw new Error(`the stored object of document ${id} is missing`);
      return reply
        .code(200)
        .header('content-type', document.mimeType)
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `inline; filename="document.${extensions[document.mimeType]}"`)
        .send(bytes);
    } catch (error) {
      return fail(error);
    }
  });
}
