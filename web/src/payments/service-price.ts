import { useEffect, useState } from 'react';
import type { OperationName } from '../api/client.ts';
import type { Payment } from './use-payment.ts';

// A catalogue price (a bouquet, exam pins, a social boost) can change between the screen reading it
// and Pay. The service then refuses the old one, charging nothing (409 PRICE_CHANGED, the price in
// details.amount): from then on the summary shows the service's price, for the person to confirm it
// with their PIN again, until the summary is closed.

export function useServicePrice<N extends OperationName>(
  payment: Payment<N>,
  shown: number | undefined,
): number | undefined {
  const [said, setSaid] = useState<number | null>(null);
  const { error, confirming } = payment;
  useEffect(() => {
    if (error?.code === 'PRICE_CHANGED' && typeof error.details?.amount === 'number')
      setSaid(error.details.amount);
  }, [error]);
  useEffect(() => {
    if (!confirming) setSaid(null);
  }, [confirming]);
  return said ?? shown;
}
