import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Schemas of the operations alerts' listing (adminListAlerts).

export const listAlertsInput = z.object(pageInput).strict();

export const listAlertsOutput = z.object({
  items: z.array(
    z.object({
      id: z.uuid(),
      kind: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      createdAt: instantOutput(),
    }),
  ),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});
