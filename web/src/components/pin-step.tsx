import { Link, useLocation } from '@tanstack/react-router';
import { forgotPinPath } from '../paths.ts';
import { PinPad } from './pin-pad.tsx';

// The transaction PIN asked as every step that needs it asks (a payment, a change of limit, closing
// the account): the pad, the lockout said before it happens, and "Forgot PIN?", which comes back here
// once a new PIN is set.

export function PinStep({ pin, onPin }: { pin: string; onPin: (pin: string) => void }) {
  const here = useLocation({ select: (location) => location.href });
  return (
    <>
      <PinPad label="Transaction PIN" pin={pin} onPin={onPin} />
      <p className="flex items-center justify-between gap-2 text-sm text-gray-700">
        <span>After 5 wrong tries your PIN locks for 30 minutes.</span>
        <Link
          to={forgotPinPath}
          search={{ next: here }}
          className="font-semibold whitespace-nowrap text-brand underline"
        >
          Forgot PIN?
        </Link>
      </p>
    </>
  );
}

/** Whether a PIN as typed can be sent: four digits. */
export const pinComplete = (pin: string): boolean => /^\d{4}$/.test(pin);
