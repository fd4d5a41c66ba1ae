import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../errors.ts';
import { sendError, toErrorResponse } from './errors.ts';

// A GET route that serves one record to whoever holds a URL the service signed
// (`<path>/:id?expires=...&signature=...`, shared/signed-urls.ts): a KYC document, a data export.
// The signature is the only credential (a browser opens the link without a bearer token), so the
// handler checks it before anything is looked up. Neither the answer nor an error may be kept by a
// cache or leak through a Referer; errors are in the envelope.

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a signed URL carries: the record's id (a UUID), its expiry and its signature, as given. */
export type SignedLink = { id: string; expires: string; signature: string };

export function registerSignedLinkRoute(
  app: FastifyInstance,
  route: {
    /** The route's path, ending in `/:id`. */
    path: string;
    /** `Cache-Control` of every answer. */
    cacheControl: string;
    /** The 404's message for an id that is not a UUID. */
    notFound: string;
    serve: (link: SignedLink, reply: FastifyReply) => Promise<FastifyReply>;
  },
): void {
  app.get(route.path, { schema: { hide: true } }, async (request, reply) => {
    reply.header('cache-control', route.cacheControl);
    reply.header('referrer-policy', 'no-referrer');
    try {
      const { id } = request.params as { id: string };
      if (!UUID_PATTERN.test(id)) throw new AppError('NOT_FOUND', route.notFound);
      // A repeated parameter arrives as an array: only one plain value of each is accepted.
      const query = request.query as Record<string, unknown>;
      return await route.serve(
        {
          id,
          expires: typeof query.expires === 'string' ? query.expires : '',
          signature: typeof query.signature === 'string' ? query.signature : '',
        },
        reply,
      );
    } catch (error) {
      return sendError(reply, toErrorResponse(error, request));
    }
  });
}
