// The purchases' own figures for operators (/metrics): the vtu module reports each purchase it
// accepts and each it settles through this port, given in its deps, so that the domain knows nothing
// of Prometheus (src/http/metrics.ts implements it). Reported after the transaction committed, so a
// rolled-back batch counts nothing.

/** What became of a purchase: accepted (debited and recorded), then settled success or failed. */
export type PurchaseMetricOutcome = 'accepted' | 'success' | 'failed';

export type PurchaseMetrics = {
  /** One purchase of the service, routed to the provider (data, bills, social), reached the outcome. */
  purchaseCounted(purchase: { service: string; provider: string }, outcome: PurchaseMetricOutcome): void;
};
