import { useQuery } from '@tanstack/react-query';
import { call } from './client.ts';

// The reads many screens share, under one query key each, so that a screen that changes one (a
// purchase changes the wallet, a verification changes the person) refreshes every reader at once.

export const queryKeys = {
  me: ['me'],
  wallet: ['wallet'],
  /**
   * Under the wallet's key: whatever moves the wallet (a payment, a funding, a release of held money)
   * re-reads the wallet, and so the day's limits with it.
   */
  limits: ['wallet', 'limits'],
  kyc: ['kyc'],
  ussd: ['ussd'],
} as const;

/** The signed-in person (getMe): names, tier, whether a PIN is set. */
export const useMe = () => useQuery({ queryKey: queryKeys.me, queryFn: () => call('getMe', {}) });

/**
 * The USSD channel as the service runs it (getUssdSettings): the code to dial, its limits and what is
 * left of today's, never the defaults guessed here.
 */
export const useUssdSettings = () =>
  useQuery({ queryKey: queryKeys.ussd, queryFn: () => call('getUssdSettings', {}) });

/** The wallet's balances, in naira. */
export const useWallet = () => useQuery({ queryKey: queryKeys.wallet, queryFn: () => call('getWallet', {}) });

/** The tier's limits, what is used of the day's, the held balance and the next tier (API.md 17.2). */
export const useLimits = (options: { enabled?: boolean } = {}) =>
  useQuery({
    queryKey: queryKeys.limits,
    queryFn: () => call('getAccountLimits', {}),
    enabled: options.enabled ?? true,
  });
