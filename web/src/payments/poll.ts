// How often a purchase still processing is asked about. Most providers answer within a second or
// two, so a purchase is asked about every half second while it is new: an instant success shows at
// once instead of after the usual 3 s poll (API.md section 15), which takes over after 10 s, when the
// provider is plainly taking its time.

const newForMs = 10_000;

export function processingPollMs(t: { status: string; createdAt: string } | undefined): number | false {
  if (t?.status !== 'processing') return false;
  return Date.now() - Date.parse(t.createdAt) < newForMs ? 500 : 3_000;
}

/** A purchase as the delivery rule reads it: its service, the order's meter type, what came. */
type Delivered = {
  status: string;
  service: string;
  token?: string;
  pins?: string[];
  order?: { type?: string };
};

/**
 * True for a success whose token or pins have not come yet (API.md section 16): the service asks
 * the provider again until they do, and they then show on the purchase and in the inbox.
 */
export function deliveryAwaited(t: Delivered | undefined): boolean {
  if (t?.status !== 'success') return false;
  if (t.service === 'electricity') return t.order?.type === 'prepaid' && !t.token;
  if (t.service === 'education') return !t.pins?.length;
  return false;
}

/** A purchase's page asks again while it is processing, and, less often, while its token is awaited. */
export function purchasePollMs(t: (Delivered & { createdAt: string }) | undefined): number | false {
  return processingPollMs(t) || (deliveryAwaited(t) ? 3_000 : false);
}
