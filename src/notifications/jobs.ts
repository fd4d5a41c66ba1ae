import { z } from 'zod';
import { defineJob } from '../jobs/job.ts';

// The jobs that carry a notification out of the service, enqueued with the fact they report: its
// email, its push to the user's devices, and a broadcast's push fan-out (pushes.ts). Declared apart
// from their handlers (module.ts) because the inbox's subscribers and the pushes enqueue them too.

/** The email of one inbox entry (email.ts). */
export const notificationEmailJob = defineJob('notification.email', z.object({ notificationId: z.uuid() }));
/** The push of one inbox entry to its user's devices (pushes.ts). */
export const notificationPushJob = defineJob('notification.push', z.object({ notificationId: z.uuid() }));
/** One page of a broadcast's push fan-out: the devices after `after` (an endpoint), from the first when null. */
export const broadcastPushJob = defineJob(
  'broadcast.push',
  z.object({ broadcastId: z.uuid(), after: z.string().nullable() }),
);
