import type { EventOf } from '../events/domain-events.ts';
import { on, type Subscription } from '../module.ts';
import type { AccountClosureModuleDeps } from './deps.ts';

// Money that reaches a closed account (decision 0047, "Left open"): a bank transfer into the
// dedicated account the provider still keeps open, a checkout started before closing and paid after,
// a transfer sent in the instant the phone was being replaced. It has moved at the provider, so it
// is never refused; it lands in the closed wallet, and an operator is told, once per credit, to
// return it to the person.

type Credit = EventOf<
  'funding.topup_credited' | 'funding.bank_deposit_credited' | 'wallet.transfer_received'
>;

export type ClosedCreditDeps = Pick<AccountClosureModuleDeps, 'db' | 'clock' | 'jobs' | 'raiseAlert'>;

/** Raises `credit_to_closed_account` when the credited person's account has closed. */
async function alertIfClosed(deps: ClosedCreditDeps, event: Credit): Promise<void> {
  const closed = await deps.db
    .selectFrom('account_closures')
    .select('closed_at')
    .where('user_id', '=', event.userId)
    .where('status', '=', 'closed')
    .executeTakeFirst();
  if (closed === undefined) return;
  await deps.raiseAlert(
    deps.db,
    {
      kind: 'credit_to_closed_account',
      message: `${event.type} of ${event.amountKobo} kobo reached a closed account (${event.reference}): return it to the person`,
      details: {
        userId: event.userId,
        event: event.type,
        reference: event.reference,
        amountKobo: event.amountKobo,
        closedAt: closed.closed_at?.toISOString() ?? null,
      },
      dedupeKey: `credit-to-closed-account:${event.type}:${event.reference}`,
    },
    deps.clock.now(),
    deps.jobs,
  );
}

/** The credits a closed account can still receive, each watched. */
export const closedCreditSubscriptions = (deps: ClosedCreditDeps): Subscription[] => [
  on('funding.topup_credited', (event) => alertIfClosed(deps, event)),
  on('funding.bank_deposit_credited', (event) => alertIfClosed(deps, event)),
  on('wallet.transfer_received', (event) => alertIfClosed(deps, event)),
];
