import type { Logger } from 'pino';
import type { VtuProviderName } from '../config.ts';
import { AppError } from '../errors.ts';
import {
  type CustomerLookupRequest,
  type VtuProvider,
  VtuProviderError,
} from '../providers/vtu/vtu-provider.ts';
import type { Catalogue } from './catalogue.ts';

// Customer look-ups before a purchase (verifyCableIUC, verifyMeter, verifyBetAccount): the name on a
// smartcard, meter or betting account, from the provider routed for the service.
//
// A number the provider does not know is 404 NOT_FOUND (API.md: "no such record"), with the
// provider's reason in details.reason; a provider that cannot answer (VtuProviderError, which the
// adapters also throw on their timeout) is 502 UPSTREAM_UNAVAILABLE. Look-ups are never answered from
// a cache: a customer's name and bouquet are what the provider says now. The name found is kept a
// while, for the purchase that usually follows to put on its receipt (verified-customers.ts).

export type LookupDeps = {
  catalogue: Pick<Catalogue, 'providerFor' | 'verifiedCustomers'>;
  providers: Record<VtuProviderName, VtuProvider>;
  logger: Logger;
};

export type FoundCustomer = { found: true; name: string; details: Record<string, string> };

export async function lookUpCustomer(
  deps: LookupDeps,
  request: CustomerLookupRequest,
): Promise<FoundCustomer> {
  const provider = deps.providers[deps.catalogue.providerFor(request.service)];
  let answer: Awaited<ReturnType<VtuProvider['verifyCustomer']>>;
  try {
    answer = await provider.verifyCustomer(request);
  } catch (error) {
    if (!(error instanceof VtuProviderError)) throw error;
    deps.logger.warn({ err: error, service: request.service }, 'customer look-up failed at the provider');
    throw new AppError('UPSTREAM_UNAVAILABLE', 'the provider could not be reached; try again shortly');
  }
  if (!answer.found) {
    throw new AppError('NOT_FOUND', `the provider found no such ${what(request)}`, {
      details: { reason: answer.reason },
    });
  }
  deps.catalogue.verifiedCustomers.remember(request, answer.name);
  return { found: true, name: answer.name, details: answer.details };
}

function what(request: CustomerLookupRequest): string {
  switch (request.service) {
    case 'cable':
      return 'smartcard';
    case 'electricity':
      return 'meter';
    case 'betting':
      return 'betting account';
  }
}
