import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { PausesApi } from '../pauses/module.ts';

// Whether a service can be bought now, as its lists say (decision 0042): not while an operator has
// paused it, or the provider it is routed to, with the operator's reason for the person to read.

export type Availability = { available: boolean; pausedReason?: string };

/** What the availability is read from: the routing and the pauses' api (this process's copy). */
export type AvailabilityDeps = {
  catalogue: { providerFor(service: VtuServiceName): VtuProviderName };
  pauseOf: PausesApi['pauseOf'];
};

/** The service's availability through the provider it is routed to now. */
export async function availabilityOf(deps: AvailabilityDeps, service: VtuServiceName): Promise<Availability> {
  const pause = await deps.pauseOf(service, deps.catalogue.providerFor(service));
  return pause === null ? { available: true } : { available: false, pausedReason: pause.reason };
}
