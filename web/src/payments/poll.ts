// How often a purchase still processing is asked about. Most providers answer within a second or
// two, so a purchase is asked about every half second while it is new: an instant success shows at
// once instead of after the usual 3 s poll (API.md section 15), which takes over after 10 s, when the
// provider is plainly taking its time.

const newForMs = 10_000;

export function processingPollMs(t: { status: string; createdAt: string } | undefined): number | false {
  if (t?.status !== 'processing') return false;
  return Date.now() - Date.parse(t.createdAt) < newForMs ? 500 : 3_000;
}
