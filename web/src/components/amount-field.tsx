import { useState } from 'react';
import { formatNairaNumber, parseNaira } from '../format.ts';
import { Field } from './ui.tsx';

// An amount in naira typed by a person, checked against the service's limits as it is typed, so a
// top-up below the minimum is said on the form rather than refused after the PIN.

export type NairaAmount = {
  text: string;
  setText: (text: string) => void;
  /** The naira typed, or null when it is not an amount. */
  value: number | null;
  /** An amount within the limits. */
  valid: boolean;
  /** What is wrong with what was typed, in words. */
  error: string | undefined;
  limits: { min: number; max?: number };
};

export function useNairaAmount(limits: { min: number; max?: number }, initial?: number): NairaAmount {
  const [text, setText] = useState(initial?.toString() ?? '');
  const value = parseNaira(text);
  const error =
    text === ''
      ? undefined
      : value === null
        ? 'Type an amount such as 2,000'
        : value < limits.min
          ? `The minimum is ${formatNairaNumber(limits.min)}`
          : limits.max !== undefined && value > limits.max
            ? `The maximum is ${formatNairaNumber(limits.max)}`
            : undefined;
  return { text, setText, value, valid: value !== null && error === undefined, error, limits };
}

export function AmountField({ amount }: { amount: NairaAmount }) {
  const { min, max } = amount.limits;
  return (
    <Field
      label="Amount (₦)"
      value={amount.text}
      onChange={amount.setText}
      inputMode="decimal"
      hint={
        max === undefined
          ? `At least ${formatNairaNumber(min)}`
          : `From ${formatNairaNumber(min)} to ${formatNairaNumber(max)}`
      }
      error={amount.error}
    />
  );
}
