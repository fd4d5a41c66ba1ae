import { defineOperation } from '../operation.ts';
import { createBroadcast, listActiveBroadcasts, votePoll } from './broadcasts.ts';
import type { NotificationsDeps } from './deps.ts';
import { listInbox, markAllRead, markRead } from './inbox.ts';
import * as s from './schemas.ts';
import { settingsOf, updateSettings } from './settings.ts';

const tags = ['notifications'];

/** The notification operations, closed over the module's deps. */
export const notificationOperations = (deps: NotificationsDeps) => [
  defineOperation({
    name: 'listNotifications',
    method: 'GET',
    auth: 'user',
    summary: 'Your inbox, newest first, with the number unread',
    tags,
    input: s.listNotificationsInput,
    output: s.listNotificationsOutput,
    errors: [],
    handler: async ({ caller, input }) => ({
      ...(await listInbox(deps.db, caller.userId, input)),
      limit: input.limit,
      offset: input.offset,
    }),
  }),
  defineOperation({
    name: 'markNotificationRead',
    method: 'POST',
    auth: 'user',
    summary: 'Mark one of your notifications read',
    tags,
    input: s.markNotificationReadInput,
    output: s.notification,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) => markRead(deps.db, caller.userId, input.id, deps.clock.now()),
  }),
  defineOperation({
    name: 'markAllNotificationsRead',
    method: 'POST',
    auth: 'user',
    summary: 'Mark all your notifications read',
    tags,
    input: s.emptyInput,
    output: s.markAllReadOutput,
    errors: [],
    handler: ({ caller }) => markAllRead(deps.db, caller.userId, deps.clock.now()),
  }),
  defineOperation({
    name: 'listBroadcasts',
    method: 'GET',
    auth: 'user',
    summary: 'Broadcasts open now, newest first, with poll tallies and your vote',
    tags,
    input: s.listBroadcastsInput,
    output: s.listBroadcastsOutput,
    errors: [],
    handler: async ({ caller, input }) => ({
      ...(await listActiveBroadcasts(deps.db, caller.userId, input, deps.clock.now())),
      limit: input.limit,
      offset: input.offset,
    }),
  }),
  defineOperation({
    name: 'votePoll',
    method: 'POST',
    auth: 'user',
    summary: 'Vote in a broadcast poll, once',
    tags,
    input: s.votePollInput,
    output: s.pollView,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input }) =>
      votePoll(deps.db, caller.userId, input.pollId, input.optionId, deps.clock.now()),
  }),
  defineOperation({
    name: 'getNotificationSettings',
    method: 'GET',
    auth: 'user',
    summary: 'Your email and push switches per notification kind',
    tags,
    input: s.emptyInput,
    output: s.notificationSettings,
    errors: [],
    handler: ({ caller }) => settingsOf(deps.db, caller.userId),
  }),
  defineOperation({
    name: 'updateNotificationSettings',
    method: 'POST',
    auth: 'user',
    summary: 'Switch email or push on or off per notification kind; the kinds not given keep theirs',
    tags,
    input: s.updateNotificationSettingsInput,
    output: s.notificationSettings,
    errors: [],
    handler: ({ caller, input }) => updateSettings(deps.db, caller.userId, input, deps.clock.now()),
  }),
  defineOperation({
    name: 'adminCreateBroadcast',
    method: 'POST',
    auth: 'admin',
    summary: 'Publish a broadcast to every user, optionally with a poll of 2–6 options',
    tags: ['admin'],
    input: s.createBroadcastInput,
    output: s.broadcast,
    errors: [],
    handler: ({ caller, input }) =>
      createBroadcast(deps.db, deps.jobs, caller.userId, input, deps.clock.now()),
  }),
];
