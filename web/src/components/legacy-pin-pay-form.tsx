import type { ReactNode } from 'react';
import type { ApiError } from '../api/errors.ts';
import { Button, ErrorNote, Field } from './ui.tsx';

// Until every screen moves to PinPayForm (issue 26): the old form, kept for the screens not yet moved.
// The end of every payment: the PIN asked last (with the lockout explained), the error of the last
// try, Pay, and the way back to the details. The summary above it is each screen's own.

export function LegacyPinPayForm(props: {
  pin: string;
  onPin: (pin: string) => void;
  busy: boolean;
  error: ApiError | null;
  /** Whatever else Pay waits for (a price still loading); the PIN's four digits are checked here. */
  ready?: boolean;
  /** Pay's label ("Pay ₦1,500.00", "Sell for ₦800.00"). */
  children: ReactNode;
  onPay: () => void;
  onBack: () => void;
}) {
  return (
    <form
      className="flex flex-col gap-4"
      onSubmit={(event) => {
        event.preventDefault();
        props.onPay();
      }}
    >
      <Field
        label="Transaction PIN"
        value={props.pin}
        onChange={props.onPin}
        type="password"
        autoComplete="off"
        inputMode="numeric"
        maxLength={4}
        hint="After 5 wrong tries your PIN locks for a while."
      />
      <ErrorNote error={props.error} />
      <Button type="submit" busy={props.busy} disabled={!/^\d{4}$/.test(props.pin) || props.ready === false}>
        {props.children}
      </Button>
      <Button variant="secondary" onClick={props.onBack}>
        Change details
      </Button>
    </form>
  );
}
