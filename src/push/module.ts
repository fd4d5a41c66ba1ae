import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import type { PushSubscriptionKeys } from '../providers/push/web-push-sender.ts';
import { pushToDevices } from './delivery.ts';
import { type PushDeps, pushOperations } from './ops.ts';
import { type Device, subscriptionPage, subscriptionsOf, usersWithDevices } from './subscriptions.ts';

// Web Push (SPEC.md "Notifications and push", API.md section 10): the users' subscriptions (this
// module's one table, push_subscriptions), the endpoint policy, and sending a payload to devices.
// What is pushed and to whom (inbox entries, broadcasts, the users' switches) is notifications'.

export type PushModuleDeps = PushDeps;

export type PushApi = {
  /**
   * Of these users, those with at least one device subscribed: one statement for a batch, on the
   * handle given (the caller's transaction, when it decides in one).
   */
  usersWithDevices(db: Kysely<DB> | Transaction<DB>, userIds: readonly string[]): Promise<Set<string>>;
  /** One user's devices. */
  devicesOf(userId: string): Promise<PushSubscriptionKeys[]>;
  /** Every device in pages ordered by endpoint, each with its user: the `limit` after `after`. */
  devicePage(after: string | null, limit: number): Promise<Device[]>;
  /** Pushes the payload to each device, forgetting those gone (404, 410); throws if any other failed. */
  pushTo(
    devices: readonly PushSubscriptionKeys[],
    payload: string,
  ): Promise<{ delivered: number; gone: number }>;
};

export type PushModule = DomainModule & { api: PushApi };

export function createPushModule(deps: PushModuleDeps): PushModule {
  return {
    operations: pushOperations(deps),
    jobs: [],
    subscribers: [],
    api: {
      usersWithDevices,
      devicesOf: (userId) => subscriptionsOf(deps.db, userId),
      devicePage: (after, limit) => subscriptionPage(deps.db, after, limit),
      pushTo: (devices, payload) => pushToDevices(deps, devices, payload),
    },
  };
}
