import { isIP } from 'node:net';
import { AppError } from '../errors.ts';
import { isRefusedAddress, type Resolve, resolveAll } from '../outbound-addresses.ts';

export { isRefusedAddress };

// Which push endpoints a user may register (API.md section 10). The service sends requests to
// them, so an endpoint is a place the service can be aimed at: only `https` URLs of the push
// services on the allow-list, and never one whose name resolves to a private, loopback,
// link-local or metadata address (a name on the list pointed at ourselves by a hostile DNS answer).
//
// The sandbox (API.md section 8) loosens two things, never outside it: its own push service's
// endpoints are accepted, though they are the service's own address; and a known push service whose
// name does not resolve is let through, for the sandbox runs offline and a browser subscribed there
// still hands its FCM or Mozilla endpoint over (an address that does not resolve is no address to
// aim at; one that resolves is judged as ever).

const hostAllowed = (host: string, allowed: readonly string[]) =>
  allowed.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));

/** What the sandbox lets through; outside it, nothing (`outsideSandbox`). */
export type SandboxEndpoints = {
  /** Whether an endpoint is one of the sandbox push service's. */
  ownPushService: (endpoint: string) => boolean;
  /** Whether a known push service's name may fail to resolve. */
  allowUnresolved: boolean;
};

export const outsideSandbox: SandboxEndpoints = { ownPushService: () => false, allowUnresolved: false };

/** Refuses an endpoint the service must not send to with 400 on `data.endpoint`. */
export async function checkPushEndpoint(
  endpoint: string,
  allowedHosts: readonly string[],
  resolve: Resolve = resolveAll,
  sandbox: SandboxEndpoints = outsideSandbox,
): Promise<void> {
  if (sandbox.ownPushService(endpoint)) return;
  const refuse = (message: string) =>
    new AppError('VALIDATION_ERROR', message, {
      details: { issues: [{ path: ['data', 'endpoint'], message }] },
    });
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw refuse('not a URL');
  }
  if (url.protocol !== 'https:') throw refuse('push endpoints are https URLs');
  if (url.username !== '' || url.password !== '') throw refuse('push endpoints carry no credentials');
  const host = url.hostname.toLowerCase();
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0 || !hostAllowed(host, allowedHosts)) {
    throw refuse('not a known push service');
  }
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    if (sandbox.allowUnresolved) return;
    throw refuse('the push service host does not resolve');
  }
  if (addresses.length === 0 && sandbox.allowUnresolved) return;
  if (addresses.length === 0 || addresses.some(isRefusedAddress)) {
    throw refuse('the push service host resolves to an address the service does not send to');
  }
}
