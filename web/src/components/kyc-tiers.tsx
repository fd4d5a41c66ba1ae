import type { ReactNode } from 'react';
import type { Output } from '../api/client.ts';
import { shownPhone } from '../format.ts';
import type { Tier } from '../payments/tiers.ts';
import { describeTierReason } from './kyc-refusals.tsx';

// What each verification tier asks for and lets a person do, as the service enforces it: purchases
// need Tier 1 (SPEC.md item 4), sending money and the dedicated account Tier 2 (SPEC.md item 13,
// API.md sections 6 and 14, whose default transfer limit is quoted), and Tier 3 puts a bank account and
// an ID on record, reviewed by a person. Each tier also raises the CBN's daily limit and maximum balance
// (API.md 17.2), whose figures are configured: Settings shows them, not this ladder.

type KycStatus = Output<'getKycStatus'>;
type TierView = KycStatus['tiers'][number];

export const tiers: Readonly<Record<Tier, { name: string; needs: string; unlocks: readonly string[] }>> = {
  1: {
    name: 'Face check',
    needs: 'A face check with your camera, about a minute',
    unlocks: [
      'Buy airtime and data, and pay bills from your wallet',
      'Receive money from other billrail users',
    ],
  },
  2: {
    name: 'Your NIN',
    needs: 'Your 11-digit NIN, registered with the phone number you use here',
    unlocks: [
      'Send money to other billrail users: up to ₦500,000 a transfer',
      'Your own account number, to fund your wallet by bank transfer from any bank',
      'A higher daily limit and maximum balance (see Limits in Settings)',
    ],
  },
  3: {
    name: 'Bank account and ID',
    needs: 'A bank account in your name and a photo or PDF of your ID',
    unlocks: [
      'Your bank account and ID on record, checked by our team',
      'The highest daily limit, and no maximum balance',
    ],
  },
};

/** A tier's state in words. "Did not pass" rather than "not approved", which reads as approved at a glance. */
const statusWords: Record<TierView['status'], string> = {
  none: 'Not started',
  pending: 'Being checked',
  approved: 'Approved',
  rejected: 'Did not pass',
};
const statusStyle: Record<TierView['status'], string> = {
  none: 'bg-gray-100 text-gray-800',
  pending: 'bg-amber-100 text-amber-900',
  approved: 'bg-green-100 text-green-900',
  rejected: 'bg-red-100 text-red-900',
};

/** What a tier unlocks, as a short list. */
export function TierUnlocks({ tier }: { tier: Tier }) {
  return (
    <ul className="list-disc pl-5 text-sm">
      {tiers[tier].unlocks.map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  );
}

/**
 * Every tier with its state, what it asks for and what it unlocks, and why one did not pass. The
 * next step (`next`: the next tier's form) sits in that tier's card, so the way on is in view.
 */
export function TierLadder({ status, phone, next }: { status: KycStatus; phone: string; next?: ReactNode }) {
  return (
    <section aria-labelledby="tiers-title" className="flex flex-col gap-2">
      <h2 id="tiers-title" className="text-lg font-semibold">
        Your tiers and what they unlock
      </h2>
      <ol className="flex flex-col gap-2">
        {status.tiers.map((view) => {
          const tier = view.tier as Tier;
          const about = tiers[tier];
          if (about === undefined) return null;
          const why =
            view.status === 'rejected' ? describeTierReason(tier, view.reason, shownPhone(phone)) : null;
          return (
            <li key={tier} data-testid={`tier-${tier}`} className="rounded-xl border border-gray-300 p-3">
              <div className="flex items-center justify-between gap-2">
                <h3 className="font-semibold">
                  Tier {tier} · {about.name}
                </h3>
                <span
                  className={`whitespace-nowrap rounded-full px-2 py-0.5 text-sm ${statusStyle[view.status]}`}
                >
                  {statusWords[view.status]}
                </span>
              </div>
              {view.status === 'approved' ? null : <p className="text-sm text-gray-700">{about.needs}</p>}
              <TierUnlocks tier={tier} />
              {why ? <p className="mt-1 text-sm text-red-900">{why}</p> : null}
              {tier === status.tier + 1 && next ? <div className="mt-3">{next}</div> : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
