import { z } from 'zod';

// Schemas of the operations alerts' listing (adminListAlerts).

const pageInput = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

export const listAlertsInput = z.object(pageInput).strict();

export const listAlertsOutput = z.object({
  items: z.array(
    z.object({
      id: z.uuid(),
      kind: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      createdAt: z.string(),
    }),
  ),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});
