import { lookup } from 'node:dns';
import { Agent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isRefusedAddress } from './endpoint-policy.ts';

/**
 * The TLS agent pushes go through. Its look-up refuses the addresses savePushSubscription refuses,
 * at the moment of sending too: a push service's name that resolved to a public address when the
 * subscription was saved and to a private one now (DNS rebinding) is never connected to.
 * `lookupAll` is node:dns's lookup; tests pass one answering the addresses they judge.
 */
export function pushAgent(lookupAll: typeof lookup = lookup): Agent {
  const safeLookup: LookupFunction = (hostname, options, callback) => {
    lookupAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '', 0);
      const list = addresses as unknown as Array<{ address: string; family: number }>;
      const refused = list.find((a) => isRefusedAddress(a.address));
      if (refused !== undefined || list.length === 0) {
        return callback(
          Object.assign(new Error(`push host ${hostname} resolves to a refused address`), {
            code: 'EREFUSED',
          }),
          '',
          0,
        );
      }
      if ((options as { all?: boolean }).all === true)
        return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
  return new Agent({ keepAlive: true, maxSockets: 64, lookup: safeLookup });
}
