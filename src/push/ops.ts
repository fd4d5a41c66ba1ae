import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { defineOperation } from '../operation.ts';
import type { Resolve } from '../outbound-addresses.ts';
import type { PushSender } from '../providers/push/web-push-sender.ts';
import { checkPushEndpoint, type SandboxEndpoints } from './endpoint-policy.ts';
import * as s from './schemas.ts';
import { deleteSubscription, saveSubscription } from './subscriptions.ts';

const tags = ['notifications'];

/** What push needs: its table, the clock, the Web Push sender, and the endpoint policy's look-up. */
export type PushDeps = {
  db: Kysely<DB>;
  clock: Clock;
  /** The Web Push sender (VAPID). */
  push: PushSender;
  /** Looks up a push service's host for the endpoint policy. */
  resolveHost: Resolve;
  config: Pick<Config['push'], 'allowedHosts'>;
  /** What the endpoint policy lets through in the sandbox; undefined outside it. */
  sandboxEndpoints: SandboxEndpoints | undefined;
};

/** The push operations, closed over the module's deps. */
export const pushOperations = (deps: PushDeps) => [
  defineOperation({
    name: 'getPushPublicKey',
    method: 'GET',
    auth: 'public',
    summary: 'The VAPID public key to subscribe with (URL-safe base64 of the 65-byte P-256 point)',
    tags,
    input: s.emptyInput,
    output: s.publicKeyOutput,
    errors: [],
    handler: async () => ({ publicKey: deps.push.publicKey }),
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
    handler: async ({ caller, input }) => {
      await checkPushEndpoint(
        input.endpoint,
        deps.config.allowedHosts,
        deps.resolveHost,
        deps.sandboxEndpoints,
      );
      await saveSubscription(deps.db, caller.userId, input, deps.clock.now());
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
    handler: async ({ caller, input }) => {
      await deleteSubscription(deps.db, caller.userId, input.endpoint);
      return { endpoint: input.endpoint };
    },
  }),
];
