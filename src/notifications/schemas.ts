import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';
import { notificationKinds, securityKinds } from './messages.ts';

// Request and answer shapes of the inbox, broadcasts and polls (API.md sections 10 and 11).

export const notification = z.object({
  id: z.string(),
  kind: z.string(),
  title: z.string(),
  body: z.string(),
  data: z.record(z.string(), z.unknown()),
  readAt: instantOutput().nullable(),
  createdAt: instantOutput(),
});

export const listNotificationsInput = z.object(pageInput).strict();

export const listNotificationsOutput = z.object({
  items: z.array(notification),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  unread: z.number().int(),
});

export const markNotificationReadInput = z.object({ id: z.uuid() }).strict();

export const emptyInput = z.object({}).strict();

export const markAllReadOutput = z.object({ marked: z.number().int() });

const text = (max: number) => z.string().trim().min(1).max(max);
/** The years an instant may name: the database refuses year 0, and nothing here predates 1970. */
const instantYears = { min: 1970, max: 9999 };
const instant = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= instantYears.min && d.getUTCFullYear() <= instantYears.max, {
    message: `an instant in the years ${instantYears.min} to ${instantYears.max}`,
  });

export const createBroadcastInput = z
  .object({
    title: text(120),
    body: text(2000),
    startsAt: instant.optional(),
    endsAt: instant.optional(),
    poll: z
      .object({ question: text(300), options: z.array(text(100)).min(2).max(6) })
      .strict()
      .optional(),
  })
  .strict();

export const pollView = z.object({
  id: z.string(),
  question: z.string(),
  options: z.array(z.object({ id: z.string(), text: z.string(), votes: z.number().int() })),
  myVote: z.string().nullable(),
});

export const broadcast = z.object({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  createdAt: instantOutput(),
  startsAt: instantOutput(),
  endsAt: instantOutput().nullable(),
  poll: pollView.optional(),
});

export const listBroadcastsInput = z.object(pageInput).strict();

export const listBroadcastsOutput = z.object({
  items: z.array(broadcast),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

export const votePollInput = z.object({ pollId: z.uuid(), optionId: z.uuid() }).strict();

const switches = z.object(Object.fromEntries(notificationKinds.map((kind) => [kind, z.boolean()])));

export const notificationSettings = z.object({ email: switches, push: switches });

/** Security mail (PIN changed, sign-in from a new device) cannot be switched off: not a field. */
const emailSwitches = z.object(
  Object.fromEntries(
    notificationKinds.filter((kind) => !securityKinds.includes(kind)).map((kind) => [kind, z.boolean()]),
  ),
);

export const updateNotificationSettingsInput = z
  .object({
    email: emailSwitches.partial().strict().optional(),
    push: switches.partial().strict().optional(),
  })
  .strict();
