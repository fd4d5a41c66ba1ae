import { defineOperation } from '../operation.ts';
import { createBroadcast, listActiveBroadcasts, votePoll } from './broadcasts.ts';
import { listInbox, markAllRead, markRead } from './inbox.ts';
import * as s from './schemas.ts';
import { settingsOf, updateSettings } from './settings.ts';

const tags = ['notifications'];

export const notificationOperations = [
  defineOperation({
    name: 'listNotifications',
    method: 'GET',
    auth: 'user',
    summary: 'Your inbox, newest first, with the number unread',
    tags,
    input: s.listNotificationsInput,
    output: s.listNotificationsOutput,
    errors: [],
    handler: async ({ ctx, caller, input }) => ({
      ...(await listInbox(ctx.db, caller.userId, input)),
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
    handler: ({ ctx, caller, input }) => markRead(ctx.db, caller.userId, input.id, ctx.clock.now()),
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
    handler: ({ ctx, caller }) => markAllRead(ctx.db, caller.userId, ctx.clock.now()),
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
    handler: async ({ ctx, caller, input }) => ({
      ...(await listActiveBroadcasts(ctx.db, caller.userId, input, ctx.clock.now())),
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
    handler: ({ ctx, caller, input }) =>
      votePoll(ctx.db, caller.userId, input.pollId, input.optionId, ctx.clock.now()),
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
    handler: ({ ctx, caller }) => settingsOf(ctx.db, caller.userId),
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
    handler: ({ ctx, caller, input }) => updateSettings(ctx.db, caller.userId, input, ctx.clock.now()),
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
    handler: ({ ctx, caller, input }) =>
      createBroadcast(ctx.db, ctx.jobs, caller.userId, input, ctx.clock.now()),
  }),
];
