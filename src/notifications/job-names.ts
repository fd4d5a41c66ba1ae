// The jobs that carry a notification out of the service, enqueued with the fact they report: its
// email, its push to the user's devices, and a broadcast's push fan-out (pushes.ts).
export const JOB_NOTIFICATION_EMAIL = 'notification.email';
export const JOB_NOTIFICATION_PUSH = 'notification.push';
export const JOB_BROADCAST_PUSH = 'broadcast.push';
