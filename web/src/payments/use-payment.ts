import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { toE164 } from '../../../src/shared/phone-number.ts';
import {
  answeredRefusal,
  type CallError,
  call,
  type Input,
  type OperationName,
  type Output,
} from '../api/client.ts';
import { queryKeys } from '../api/queries.ts';
import type { Prefill } from './prefill.ts';

// Every payment screen's one way to pay. It owns the Idempotency-Key's life:
//
// - a key is made when the summary opens (`open`), and every retry of that intent sends it again, so a
//   retry after a lost connection is the same payment, never a second one;
// - a refusal the service answered (a wrong PIN, a price change) charged nothing: the corrected try is
//   a new intent with a new key (the old key with other input would be refused as reused);
// - an answer that never came (offline, a 5xx, still in progress) keeps the key: the payment may have
//   gone through. The screen says so, and the history is searched every few seconds until the
//   payment is found; "Check again" resends with the same key, which the service answers once.
//
// A success goes to its receipt (`onDone`), with the wallet re-read everywhere.

export type Payment<N extends OperationName> = {
  /** The summary is open: Pay sends this intent. */
  confirming: boolean;
  /**
   * Opens the summary for a new intent. A purchase is given its order as the screen's prefill and
   * writes it into the address (usePurchase).
   */
  open: (order?: Prefill) => void;
  /** Back to the details; the intent is dropped. */
  close: () => void;
  pay: (input: Input<N>) => void;
  busy: boolean;
  error: CallError | null;
  /** The answer was lost: the payment may have gone through. */
  lost: boolean;
  /** Pay again with the same key, after a lost answer: safe, the service does it at most once. */
  retry: () => void;
};

/** No answer to go by: the payment may have gone through. A pause is an answer: nothing was debited. */
const lostAnswer = (error: CallError) =>
  error.code === 'OFFLINE' ||
  (error.status >= 500 && error.code !== 'SERVICE_PAUSED') ||
  error.code === 'IDEMPOTENCY_IN_PROGRESS';

export function usePayment<N extends OperationName>(
  operation: N,
  options: {
    onDone: (output: Output<N>) => void | Promise<void>;
    /** Looks for this payment among what happened since `since`, after its answer was lost. */
    find?: (since: Date) => Promise<Output<N> | null>;
  },
): Payment<N> {
  const queries = useQueryClient();
  const [key, setKey] = useState<string | null>(null);
  const [lostSince, setLostSince] = useState<Date | null>(null);
  const [lastInput, setLastInput] = useState<Input<N> | null>(null);

  const done = async (output: Output<N>) => {
    setLostSince(null);
    // Not waited for: the receipt must not wait on a balance read over a slow network.
    void queries.invalidateQueries({ queryKey: queryKeys.wallet });
    await options.onDone(output);
  };

  const mutation = useMutation<Output<N>, CallError, { input: Input<N>; key: string }>({
    mutationFn: ({ input, key }) => call(operation, input, { idempotencyKey: key }),
    onSuccess: done,
    onError: (error) => {
      if (answeredRefusal(error)) {
        setKey(crypto.randomUUID());
        // The wallet (and with it the day's limits, under its key) moved since the screen read it.
        if (error.code === 'INSUFFICIENT_FUNDS' || error.code === 'LIMIT_EXCEEDED')
          void queries.invalidateQueries({ queryKey: queryKeys.wallet });
        // Frozen since the screen read the person: read again, so the screens say so from now on.
        if (error.code === 'ACCOUNT_FROZEN') void queries.invalidateQueries({ queryKey: queryKeys.me });
      } else if (lostAnswer(error)) setLostSince((since) => since ?? new Date());
    },
  });

  useQuery({
    queryKey: ['lost-payment', operation, key],
    enabled: lostSince !== null && options.find !== undefined,
    refetchInterval: 3_000,
    queryFn: async () => {
      const found = lostSince === null ? null : await options.find!(lostSince);
      if (found !== null) await done(found);
      return found;
    },
  });

  const send = (input: Input<N>) => {
    if (key === null) return;
    setLastInput(input);
    mutation.mutate({ input, key });
  };

  return {
    confirming: key !== null,
    open: () => {
      mutation.reset();
      setLostSince(null);
      setKey(crypto.randomUUID());
    },
    close: () => {
      mutation.reset();
      setLostSince(null);
      setKey(null);
    },
    pay: send,
    busy: mutation.isPending,
    // A lost answer is not an error to show: the payment may have gone through.
    error: mutation.error !== null && !lostAnswer(mutation.error) ? mutation.error : null,
    lost: lostSince !== null || (mutation.error !== null && lostAnswer(mutation.error)),
    retry: () => {
      if (lastInput !== null) send(lastInput);
    },
  };
}

/**
 * The same recipient: the same text, or the same phone number however it is written. Only phones
 * are compared as numbers: a meter, a betting ID or a link sharing some digits is another recipient.
 */
function sameRecipient(a: string, b: string): boolean {
  if (a.trim() === b.trim()) return true;
  const phone = toE164(a);
  return phone !== null && phone === toE164(b);
}

/**
 * A VTU purchase's payment: a success opens its receipt at once (the record the service answered is
 * put in the cache, so an instant success shows without waiting for the screen's poll), and a lost
 * answer is looked for among the person's purchases of `service` to `recipient`.
 */
export function usePurchase<N extends OperationName>(
  operation: N,
  lookFor: { service: string; recipient: string },
  /** Runs once the purchase has succeeded, before its receipt opens (a beneficiary "Save as"). */
  onPaid?: () => Promise<void>,
): Payment<N> {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const payment = usePayment(operation, {
    onDone: async (output) => {
      await onPaid?.();
      const purchase = output as { id: string; status: string };
      // The receipt opens on the answer at once; one still processing is also asked about again as
      // the receipt opens (marked stale), since most providers have answered by then.
      queries.setQueryData(['transaction', purchase.id], output);
      if (purchase.status === 'processing')
        void queries.invalidateQueries({ queryKey: ['transaction', purchase.id] });
      await navigate({ to: '/transactions/$id', params: { id: purchase.id } });
    },
    find: async (since) => {
      const recent = await call('listMyVtuTransactions', {
        service: lookFor.service as never,
        from: new Date(since.getTime() - 60_000).toISOString(),
        limit: 10,
      });
      const found = recent.items.find((t) => sameRecipient(t.recipient, lookFor.recipient));
      return (found as Output<N> | undefined) ?? null;
    },
  });
  return {
    ...payment,
    open: (order?: Prefill) => {
      // The order goes into the address as the screen's prefill, so that a reload, or "Forgot PIN?"
      // from the pay step (which comes back to this address), finds the form filled in.
      if (order !== undefined) void navigate({ to: '.', search: order, replace: true } as never);
      payment.open();
    },
  };
}
