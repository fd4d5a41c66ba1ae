import { Field } from '../../components/ui.tsx';

// A new transaction PIN, typed twice: setting the first one and changing it ask the same way.

/** Four digits, the same both times. */
export const newPinReady = (pin: string, again: string): boolean => /^\d{4}$/.test(pin) && pin === again;

export function NewPinFields(props: {
  pin: string;
  again: string;
  onPin: (pin: string) => void;
  onAgain: (again: string) => void;
}) {
  const mismatch =
    props.again.length === 4 && props.pin !== props.again ? 'The two PINs are not the same' : undefined;
  return (
    <>
      <Field
        label="New PIN"
        value={props.pin}
        onChange={props.onPin}
        type="password"
        autoComplete="new-password"
        inputMode="numeric"
        maxLength={4}
        hint="4 digits"
      />
      <Field
        label="Type it again"
        value={props.again}
        onChange={props.onAgain}
        type="password"
        autoComplete="new-password"
        inputMode="numeric"
        maxLength={4}
        error={mismatch}
      />
    </>
  );
}
