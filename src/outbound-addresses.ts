import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

// The addresses the service never sends to, nor lets anyone aim it (or a provider acting for it) at:
// private, loopback, link-local, metadata, multicast and reserved ranges, and the IPv6 forms that
// carry an IPv4 address (NAT64, 6to4, Teredo, ...) when the address they carry is one of those. Push
// endpoints (src/push/endpoint-policy.ts, when saved and when sent) and social orders' links
// (src/vtu/social-links.ts) are judged by it.

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

/** An IPv6 address as its 16 bytes (a zone id is dropped); null for anything that is not one. */
const ipv6Bytes = (address: string): number[] | null =>
  ipaddr.IPv6.isValid(address) ? ipaddr.IPv6.parse(address).toByteArray() : null;

/** The dotted IPv4 address in the four bytes at `offset`, each XORed with `mask` (Teredo's 0xff). */
const ipv4At = (bytes: readonly number[], offset: number, mask = 0): string =>
  [0, 1, 2, 3].map((i) => bytes[offset + i]! ^ mask).join('.');

/**
 * The IPv6 forms that carry an IPv4 address, and where each carries it: an address in one of them
 * reaches (through a translator, a relay or a dual stack) the IPv4 address it carries, so it is judged
 * like that address. `carried` answers the IPv4 addresses it carries, or null for a form refused
 * whatever it carries.
 */
export const ipv4EmbeddingForms: ReadonlyArray<{
  form: string;
  network: string;
  prefix: number;
  carried: (bytes: readonly number[]) => string[] | null;
}> = [
  // ::ffff:a.b.c.d, what a dual-stack socket calls an IPv4 peer (RFC 4291).
  { form: 'IPv4-mapped', network: '::ffff:0:0', prefix: 96, carried: (b) => [ipv4At(b, 12)] },
  // ::a.b.c.d, deprecated but still routed to the IPv4 address by some stacks (RFC 4291).
  { form: 'IPv4-compatible', network: '::', prefix: 96, carried: (b) => [ipv4At(b, 12)] },
  // The well-known NAT64 prefix: the translator connects to the last 32 bits (RFC 6052).
  { form: 'NAT64', network: '64:ff9b::', prefix: 96, carried: (b) => [ipv4At(b, 12)] },
  // The local-use NAT64 prefix (RFC 8215) is a network's own translator, with its own prefix length
  // (and so its own place for the IPv4 bits): nothing in it is a public address.
  { form: 'NAT64 local-use', network: '64:ff9b:1::', prefix: 48, carried: () => null },
  // 2002:AABB:CCDD::/48 is the 6to4 site of the IPv4 address AA.BB.CC.DD (RFC 3056).
  { form: '6to4', network: '2002::', prefix: 16, carried: (b) => [ipv4At(b, 2)] },
  // Teredo (RFC 4380): the server's IPv4 in bits 32-63, the client's in the last 32 bits, inverted.
  {
    form: 'Teredo',
    network: '2001::',
    prefix: 32,
    carried: (b) => [ipv4At(b, 4), ipv4At(b, 12, 0xff)],
  },
];

const embeddingRanges = ipv4EmbeddingForms.map((form) => {
  const range = new BlockList();
  range.addSubnet(form.network, form.prefix, 'ipv6');
  return { ...form, range };
});

/** The embedding form an IPv6 address is in, with its bytes; undefined for none. */
function embeddingOf(address: string) {
  const bytes = ipv6Bytes(address);
  if (bytes === null) return undefined;
  const form = embeddingRanges.find((f) => f.range.check(address.replace(/%.*$/, ''), 'ipv6'));
  return form === undefined ? undefined : { form, bytes };
}

/** The IPv4 addresses an IPv6 address carries (see ipv4EmbeddingForms); none for any other address. */
export function carriedIpv4(address: string): string[] {
  const found = embeddingOf(address);
  return found?.form.carried(found.bytes) ?? [];
}

/** True for an address the service must never send to; an IPv6 form carrying an IPv4 is judged as it. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return refusedRanges.check(address, 'ipv4');
  // Node's BlockList already judges IPv4-mapped addresses by the IPv4 rules.
  if (refusedRanges.check(address, 'ipv6')) return true;
  const found = embeddingOf(address);
  if (found === undefined) return false;
  const carried = found.form.carried(found.bytes);
  return carried === null || carried.some((ipv4) => refusedRanges.check(ipv4, 'ipv4'));
}

export type Resolve = (host: string) => Promise<string[]>;

export const resolveAll: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
