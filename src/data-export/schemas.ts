import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';

// Request and answer shapes of the data export (API.md 17.3): a person asks for a copy of their
// data, a job builds it, and getDataExport answers with a short-lived signed URL while it is kept.

export const dataExportStatuses = ['preparing', 'ready', 'expired'] as const;
export type DataExportStatus = (typeof dataExportStatuses)[number];

export const requestDataExportInput = z.object({}).strict();

export const requestDataExportOutput = z.object({
  id: z.string().describe('The export, to ask getDataExport about'),
  status: z
    .literal('preparing')
    .describe('A job is building the file; the person is notified when it is ready'),
});

export const getDataExportInput = z.object({ id: z.uuid() }).strict();

export const dataExportView = z.object({
  id: z.string(),
  status: z
    .enum(dataExportStatuses)
    .describe('preparing until the file is built; ready while it is kept (7 days); expired once deleted'),
  url: z
    .string()
    .optional()
    .describe(
      'When ready: where to download the file (one JSON document), signed, for at most 10 minutes; ask again for a fresh one',
    ),
  expiresAt: instantOutput('When ready: when the file is deleted').optional(),
});
export type DataExportView = z.infer<typeof dataExportView>;
