import { z } from 'zod';

/** The query fields of every list (API.md section 5): `limit` 1–100 (default 20), `offset` from 0. */
export const pageInput = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};
