import { defineOperation } from '../operation.ts';
import { checkPushEndpoint } from './endpoint-policy.ts';
import * as s from './schemas.ts';
import { deleteSubscription, saveSubscription } from './subscriptions.ts';

const tags = ['notifications'];

export const pushOperations = [
  defineOperation({
    name: 'getPushPublicKey',
    method: 'GET',
    auth: 'public',
    summary: 'The VAPID public key to subscribe with (URL-safe base64 of the 65-byte P-256 point)',
    tags,
    input: s.emptyInput,
    output: s.publicKeyOutput,
    errors: [],
    handler: async ({ ctx }) => ({ publicKey: ctx.push.publicKey }),
  }),
  defineOperation({
    name: 'savePushSubscription',
    method: 'POST',
    auth: 'user',
    summary: "Register this browser's push subscription (an upsert by endpoint)",
    tags,
    input: s.savePushSubscriptionInput,
    output: s.subscriptionOutput,
    errors: [],
    handler: async ({ ctx, caller, input }) => {
      await checkPushEndpoint(input.endpoint, ctx.config.push.allowedHosts, ctx.resolveHost);
      await saveSubscription(ctx.db, caller.userId, input, ctx.clock.now());
      return { endpoint: input.endpoint };
    },
  }),
  defineOperation({
    name: 'deletePushSubscription',
    method: 'POST',
    auth: 'user',
    summary:
      'Remove one of your push subscriptions (the web client does this before signing out); an endpoint you have no subscription at is 404 NOT_FOUND, which a client retrying the delete may take as done',
    tags,
    input: s.deletePushSubscriptionInput,
    output: s.subscriptionOutput,
    errors: ['NOT_FOUND'],
    handler: async ({ ctx, caller, input }) => {
      await deleteSubscription(ctx.db, caller.userId, input.endpoint);
      return { endpoint: input.endpoint };
    },
  }),
];
