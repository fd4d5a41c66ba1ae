import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../errors.ts';

// Which push endpoints a user may register (API.md section 10). The service sends requests to
// them, so an endpoint is a place the service can be aimed at: only `https` URLs of the push
// services on the allow-list, and never one whose name resolves to a private, loopback,
// link-local or metadata address (a name on the list pointed at ourselves by a hostile DNS answer).

const refusedRanges = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  refusedRanges.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fd00:ec2::', 32], // AWS metadata over IPv6
  ['ff00::', 8],
] as const) {
  refusedRanges.addSubnet(network, prefix, 'ipv6');
}

/** True for an address the service must never send to. IPv4-mapped IPv6 is judged as its IPv4. */
export function isRefusedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return refusedRanges.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return refusedRanges.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const hostAllowed = (host: string, allowed: readonly string[]) =>
  allowed.some((entry) => (entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry));

export type Resolve = (host: string) => Promise<string[]>;

const resolveAll: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Refuses an endpoint the service must not send to with 400 on `data.endpoint`. */
export async function checkPushEndpoint(
  endpoint: string,
  allowedHosts: readonly string[],
  resolve: Resolve = resolveAll,
): Promise<void> {
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
    throw refuse('the push service host does not resolve');
  }
  if (addresses.length === 0 || addresses.some(isRefusedAddress)) {
    throw refuse('the push service host resolves to an address the service does not send to');
  }
}
