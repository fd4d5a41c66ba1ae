import { Delete } from 'lucide-react';

// The PIN as the money apps people know ask for it: four dots filled as digits are tapped on an
// on-screen pad, so the phone's keyboard never covers the summary. The field underneath stays a real
// labelled input, so a keyboard, a screen reader or a password manager can type into it as well.

const digits = ['1', '2', '3', '4', '5', '6', '7', '8', '9'] as const;

export function PinPad({ pin, onPin, label }: { pin: string; onPin: (pin: string) => void; label: string }) {
  const press = (digit: string) => {
    if (pin.length < 4) onPin(pin + digit);
  };
  const key = 'rounded-xl bg-gray-100 py-2 text-xl font-semibold text-gray-900 active:bg-gray-200';
  return (
    <div className="flex flex-col gap-2">
      <label className="flex flex-col items-center gap-2 font-medium">
        {label}
        <input
          className="w-36 rounded-lg border border-gray-400 bg-white px-3 py-1 text-center text-2xl tracking-[0.6em]"
          value={pin}
          onChange={(event) => onPin(event.target.value.replace(/\D/g, '').slice(0, 4))}
          type="password"
          inputMode="numeric"
          autoComplete="off"
          maxLength={4}
        />
      </label>
      <fieldset className="grid grid-cols-3 gap-2">
        <legend className="sr-only">PIN pad</legend>
        {digits.map((digit) => (
          <button key={digit} type="button" className={key} onClick={() => press(digit)}>
            {digit}
          </button>
        ))}
        <span />
        <button type="button" className={key} onClick={() => press('0')}>
          0
        </button>
        <button
          type="button"
          className={`${key} flex items-center justify-center`}
          onClick={() => onPin(pin.slice(0, -1))}
          aria-label="Delete the last digit"
        >
          <Delete aria-hidden="true" />
        </button>
      </fieldset>
    </div>
  );
}
