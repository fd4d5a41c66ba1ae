import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { serviceNames } from '../../../src/shared/display-names.ts';
import { call } from '../api/client.ts';
import { Waiting } from './ui.tsx';

// Before a buy form: whether the service can be bought now. An operator may pause a service (or the
// provider it is routed to) during an outage (API.md section 17.4); its catalogue lists then say
// `available: false` with the operator's reason, and the form is not shown, so nobody types a number
// and a PIN only to be refused. A purchase already on its way when the pause comes is refused by the
// service (503 SERVICE_PAUSED, nothing debited) and says so in its own words (api/errors.ts).

export type GatedService =
  | 'airtime'
  | 'data'
  | 'cable'
  | 'electricity'
  | 'betting'
  | 'education'
  | 'social'
  | 'airtime_to_cash';

type Availability = { available: boolean; pausedReason?: string | undefined };

/** The catalogue list each service's availability is read from: the one the form would read anyway. */
const availabilityOf: Record<GatedService, () => Promise<Availability>> = {
  airtime: () => call('listAirtimeNetworks', {}),
  data: () => call('listDataNetworks', {}),
  cable: () => call('listCableProviders', {}),
  electricity: () => call('listElectricityPlans', {}),
  betting: () => call('listBetCompanies', {}),
  // Any exam's list says whether exam pins can be bought.
  education: () => call('listEducationPins', { exam: 'waec' }),
  social: () => call('listSocialServices', {}),
  // Selling airtime has no list: the quote of the smallest sale (₦100 of MTN) says it as well.
  airtime_to_cash: () => call('quoteAirtimeToCash', { network: 'mtn', amount: 100 }),
};

export function ServiceGate({ service, children }: { service: GatedService; children: ReactNode }) {
  const availability = useQuery({
    queryKey: ['availability', service],
    queryFn: async () => {
      const { available, pausedReason } = await availabilityOf[service]();
      return { available, pausedReason } satisfies Availability;
    },
    // Read again on every visit: a pause is lifted, or set, while the person is elsewhere.
    staleTime: 0,
    // Not asked twice before the form shows: failing, the form is shown anyway (below).
    retry: false,
  });
  if (availability.isPending) return <Waiting label="Loading" />;
  // Offline or failing, the form is shown: the service still refuses what is paused.
  if (availability.data?.available !== false) return children;
  const name = serviceNames[service] ?? 'This service';
  return (
    <section
      aria-labelledby="service-paused-title"
      className="flex flex-col gap-2 rounded-xl bg-amber-50 p-4 text-amber-950"
      data-testid="service-paused"
    >
      <h2 id="service-paused-title" className="text-lg font-semibold">
        {name} is unavailable for now
      </h2>
      {availability.data.pausedReason ? <p>{availability.data.pausedReason}</p> : null}
      <p>
        Nothing can be bought here until it is back. Please try again later; your money stays in your wallet.
      </p>
    </section>
  );
}
