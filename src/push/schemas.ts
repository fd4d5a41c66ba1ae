import { z } from 'zod';

// Web Push shapes (SPEC.md "Notifications and push", API.md section 10).

const base64url = (bytes: number, what: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+={0,2}$/, `${what}: URL-safe base64`)
    .refine((value) => Buffer.from(value, 'base64url').length === bytes, `${what}: ${bytes} bytes`);

export const emptyInput = z.object({}).strict();

export const publicKeyOutput = z.object({ publicKey: z.string() });

export const savePushSubscriptionInput = z
  .object({
    endpoint: z.string().max(2048),
    /** The browser's P-256 public key: 65 bytes, uncompressed. */
    p256dh: base64url(65, 'p256dh').refine(
      (v) => Buffer.from(v, 'base64url')[0] === 4,
      'p256dh: an uncompressed point',
    ),
    /** The authentication secret: 16 bytes. */
    auth: base64url(16, 'auth'),
  })
  .strict();

export const deletePushSubscriptionInput = z.object({ endpoint: z.string().max(2048) }).strict();

export const subscriptionOutput = z.object({ endpoint: z.string() });
