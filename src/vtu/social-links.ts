import { isIP } from 'node:net';
import { AppError } from '../errors.ts';
import { isRefusedAddress, type Resolve, resolveAll } from '../outbound-addresses.ts';

// Which links a social order may name (API.md section 14): an `https` URL of a public host. The
// panel visits the link for us, so a link to an internal address would aim a third party at our
// network (or its own): the host is resolved, and refused when any of its addresses is private,
// loopback, link-local or metadata. A name that does not resolve cannot be checked, so it is refused
// too, except where the configuration allows it (the sandbox: offline, and its panel visits nothing).

export type LinkPolicy = { allowUnresolved: boolean; resolve?: Resolve };

/** Names that are internal whatever DNS says of them. */
const internalNames = /(^|\.)(localhost|local|internal|intranet|lan|home\.arpa)$/;

const refuse = (message: string) =>
  new AppError('VALIDATION_ERROR', message, { details: { issues: [{ path: ['data', 'link'], message }] } });

/** Refuses a link the panel must not be sent to, with 400 on `data.link`. */
export async function checkOrderLink(link: string, policy: LinkPolicy): Promise<void> {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw refuse('not a URL');
  }
  if (url.protocol !== 'https:') throw refuse('links are https URLs');
  if (url.username !== '' || url.password !== '') throw refuse('links carry no credentials');
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  const literal = host.replace(/^\[|\]$/g, '');
  if (isIP(literal) !== 0) {
    if (isRefusedAddress(literal)) throw refuse('the link points at an internal address');
    return;
  }
  // A single label (`metadata`, `intranet`) is found through the resolver's search list: internal.
  if (!host.includes('.') || internalNames.test(host)) throw refuse('the link names an internal host');
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? resolveAll)(host);
  } catch (error) {
    if (policy.allowUnresolved) return;
    const code = (error as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') throw refuse('the link host does not exist');
    // The resolver failed, not the name: nothing was charged, and the caller may try again.
    throw new AppError('UPSTREAM_UNAVAILABLE', 'the link host could not be looked up; nothing was charged', {
      details: { provider: 'dns' },
    });
  }
  if (addresses.length === 0 && !policy.allowUnresolved) throw refuse('the link host does not exist');
  if (addresses.some(isRefusedAddress)) throw refuse('the link host resolves to an internal address');
}
