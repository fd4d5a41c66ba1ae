import { useMutation } from '@tanstack/react-query';
import { type CallError, call, type Input, type Output } from '../api/client.ts';

// A bill's account checked with its provider before the summary opens (verifyMeter, verifyCableIUC,
// verifyBetAccount), so the person sees whose meter, card or account it is before the PIN: a number
// typed wrong is caught while nothing has been paid.

type Lookup = 'verifyMeter' | 'verifyCableIUC' | 'verifyBetAccount';

export type CustomerCheck<N extends Lookup> = {
  /** Looks the account up; `then` runs once it is found. */
  check: (input: Input<N>, then?: (customer: Output<N>) => void) => void;
  /** The account last found, with what it was looked up by. */
  found: { customer: Output<N>; input: Input<N> } | null;
  busy: boolean;
  error: CallError | null;
  /** A 404: the provider has no such account (the screen says which number to check). */
  notFound: boolean;
};

export function useCustomerCheck<N extends Lookup>(operation: N): CustomerCheck<N> {
  const mutation = useMutation<Output<N>, CallError, Input<N>>({
    mutationFn: (input) => call(operation, input),
  });
  return {
    check: (input, then) => mutation.mutate(input, { onSuccess: (customer) => then?.(customer) }),
    found:
      mutation.data !== undefined && mutation.variables !== undefined
        ? { customer: mutation.data, input: mutation.variables }
        : null,
    busy: mutation.isPending,
    error: mutation.error,
    notFound: mutation.error?.code === 'NOT_FOUND',
  };
}
