import type { FastifyInstance } from 'fastify';
import { type DataExportApi, EXPORT_PATH } from '../data-export/module.ts';
import { registerSignedLinkRoute } from './signed-link-route.ts';

// GET /data-exports/:id?expires=...&signature=... serves a person's copy of their data to whoever
// holds a URL that getDataExport signed (at most 10 minutes): the module checks the signature before
// anything is looked up, 403 for a forged or expired one, 404 once the file is deleted. A download,
// never cached.

export function registerDataExportRoute(app: FastifyInstance, exports: DataExportApi): void {
  registerSignedLinkRoute(app, {
    path: `${EXPORT_PATH}/:id`,
    cacheControl: 'no-store',
    notFound: 'data export not found',
    serve: async (link, reply) => {
      const file = await exports.download(link);
      const day = file.readyAt.toISOString().slice(0, 10);
      return reply
        .code(200)
        .header('content-type', 'application/json; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `attachment; filename="billrail-data-${day}.json"`)
        .send(file.json);
    },
  });
}
