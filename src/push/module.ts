import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import type { Resolve } from '../outbound-addresses.ts';
import type { PushSender, PushSubscriptionKeys } from '../providers/push/web-push-sender.ts';
import { forgetDevicesOf } from './account-closure.ts';
import { pushToDevices } from './delivery.ts';
import type { SandboxEndpoints } from './endpoint-policy.ts';
import { pushOperations } from './ops.ts';
import { type PushDevice, pushDevicesOf } from './personal-data.ts';
import { type Device, subscriptionPage, subscriptionsOf, usersWithDevices } from './subscriptions.ts';

// Web Push (SPEC.md "Notifications and push", API.md section 10): the users' subscriptions (this
// module's one table, push_subscriptions), the endpoint policy, and sending a payload to devices.
// What is pushed and to whom (inbox entries, broadcasts, the users' switches) is notifications'.

/**
 * Everything push is given (createModules). The operations and the delivery take the part they need
 * (PushDeps in ops.ts, PushDeliveryDeps in delivery.ts), which the compiler checks these satisfy.
 */
export type PushModuleDeps = {
  /** The database: this module's one table, push_subscriptions. */
  db: Kysely<DB>;
  /** The service clock: when a subscription is saved. */
  clock: Clock;
  /** The Web Push sender (VAPID): the public key the browsers subscribe with, and the sending. */
  push: PushSender;
  /** Looks up a push service's host for the endpoint policy (the outbound-address check). */
  resolveHost: Resolve;
  /** The push services' hosts a subscription may name (PUSH_ALLOWED_HOSTS). */
  config: Pick<Config['push'], 'allowedHosts'>;
  /** What the endpoint policy lets through in the sandbox; undefined outside it. */
  sandboxEndpoints: SandboxEndpoints | undefined;
};

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
  /** The person's devices by push service and dates, without their endpoints' secrets (their data export). */
  personalDataOf(userId: string): Promise<PushDevice[]>;
  /** Deletes every device of the person, in the closing account's transaction. */
  forgetDevicesOf: typeof forgetDevicesOf;
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
      personalDataOf: (userId) => pushDevicesOf(deps.db, userId),
      forgetDevicesOf,
    },
  };
}
