import { Link } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import type { OperationName } from '../api/client.ts';
import { useLimits, useWallet } from '../api/queries.ts';
import { formatNairaNumber } from '../format.ts';
import { overDailyLimit, overLimitOfRefusal } from '../payments/limits.ts';
import type { Payment } from '../payments/use-payment.ts';
import { FrozenNotice, useFrozen } from './frozen-notice.tsx';
import { LimitNote } from './limit-note.tsx';
import { PinStep, pinComplete } from './pin-step.tsx';
import { Button, ErrorNote } from './ui.tsx';

// The end of every payment, under the screen's own summary: the wallet balance, the PIN asked last
// (on its pad, with the lockout explained), the error of the last try, Pay, and the way back.
// Instead of the PIN: when the account is frozen, what to do about it; when the price is over what
// the day's limit leaves (API.md 17.2), what is left and what would lift it; when the balance does
// not cover the price, "Fund wallet". When the answer to Pay was lost, the person is told the
// payment may have gone through, never to pay again.

export function PinPayForm<N extends OperationName>(props: {
  payment: Payment<N>;
  /** What the wallet will be charged, in naira; undefined while the price loads. Omit when money comes in. */
  price?: number | undefined;
  /** Whatever else Pay waits for besides the price and the PIN. */
  ready?: boolean;
  /** Pay's label ("Pay ₦1,500.00", "Sell for ₦800.00"). */
  children: ReactNode;
  /** Sends the payment with the PIN typed. */
  onPay: (pin: string) => void;
}) {
  const { payment } = props;
  const [pin, setPin] = useState('');
  const wallet = useWallet();
  const paying = 'price' in props;
  // Read only where money leaves: unread (offline, failing), the PIN is asked and the service judges.
  const limits = useLimits({ enabled: paying });
  const balance = wallet.data?.balance;
  const short = props.price !== undefined && balance !== undefined && props.price > balance;
  // Money going out of a frozen account would be refused (ACCOUNT_FROZEN): say so instead of the PIN.
  const frozen = useFrozen() && paying;
  // Over the day's limit whatever the balance: funding would not help, so this is said first. Once the
  // service has refused it so (the limits may have moved since they were read), its answer is shown.
  const overLimit =
    props.price !== undefined && limits.data !== undefined ? overDailyLimit(limits.data, props.price) : null;
  const refusedOverLimit = overLimitOfRefusal(payment.error, limits.data);

  if (payment.lost) {
    return (
      <div className="flex flex-col gap-4">
        <div role="status" aria-live="polite" className="rounded-lg bg-amber-100 p-3 text-amber-900">
          <p className="font-semibold">We did not get an answer. Your payment may have gone through.</p>
          <p>Do not pay again: we are checking your history and will show it here as soon as we find it.</p>
        </div>
        <Button busy={payment.busy} onClick={payment.retry}>
          Check again
        </Button>
      </div>
    );
  }

  return (
    <form
      className="flex flex-col gap-4"
      onSubmit={(event) => {
        event.preventDefault();
        props.onPay(pin);
        setPin('');
      }}
    >
      {balance !== undefined ? (
        <p className="text-gray-700" data-testid="wallet-balance">
          Wallet balance:{' '}
          <span className="font-semibold whitespace-nowrap">{formatNairaNumber(balance)}</span>
        </p>
      ) : null}
      {frozen ? (
        <>
          <FrozenNotice />
          <ErrorNote error={payment.error} />
        </>
      ) : refusedOverLimit !== null ? (
        <LimitNote over={refusedOverLimit} refused />
      ) : overLimit !== null ? (
        <LimitNote over={overLimit} />
      ) : short ? (
        <div className="flex flex-col gap-3 rounded-lg bg-amber-100 p-3 text-amber-900" role="status">
          <p>
            Your balance does not cover this. Add at least{' '}
            <span className="font-semibold whitespace-nowrap">
              {formatNairaNumber(props.price! - balance!)}
            </span>{' '}
            to pay.
          </p>
          <Link
            to="/fund"
            className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white"
          >
            Fund wallet
          </Link>
        </div>
      ) : (
        <>
          <PinStep pin={pin} onPin={setPin} />
          <ErrorNote error={payment.error} />
          <Button
            type="submit"
            busy={payment.busy}
            disabled={
              !pinComplete(pin) || props.ready === false || ('price' in props && props.price === undefined)
            }
          >
            {props.children}
          </Button>
        </>
      )}
      <Button variant="secondary" onClick={payment.close}>
        Change details
      </Button>
    </form>
  );
}
