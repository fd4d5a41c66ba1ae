import { Check, Copy as CopyIcon } from 'lucide-react';
import { useState } from 'react';

// What a purchase delivered for the person to type in: a meter token, exam PINs. Shown alike on the
// purchase's page and in the inbox (where a token that came after the success arrives), each with a
// button that copies it.

/** A meter token as it is typed: 1234 5678 9012 3456 7890. Anything that is not all digits stays as it is. */
export const groupInFours = (token: string): string => {
  const digits = token.replace(/[\s-]/g, '');
  return /^\d+$/.test(digits) ? digits.replace(/(\d{4})(?=\d)/g, '$1 ') : token;
};

export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  const [failed, setFailed] = useState(false);
  return (
    <>
      <button
        type="button"
        aria-label={copied ? `Copied ${what}` : `Copy ${what}`}
        className="flex items-center gap-1 rounded-lg border border-brand px-3 py-2 font-semibold text-brand"
        onClick={() => {
          setFailed(false);
          navigator.clipboard
            .writeText(text)
            .then(() => setCopied(true))
            .catch(() => setFailed(true));
        }}
      >
        {copied ? <Check size={18} aria-hidden="true" /> : <CopyIcon size={18} aria-hidden="true" />}
        {copied ? 'Copied' : 'Copy'}
      </button>
      {failed ? (
        <span className="text-sm text-red-800">Copying is not allowed here: select it instead.</span>
      ) : null}
    </>
  );
}

/**
 * The token (with its units) and the PINs, each copyable; nothing when there are none. `id` makes
 * the headings' ids unique where several show on one screen (the inbox).
 */
export function DeliveredCodes(props: { id: string; token?: string; units?: string; pins?: string[] }) {
  const { id, token, units, pins } = props;
  return (
    <>
      {token ? (
        <section
          aria-labelledby={`${id}-token-title`}
          className="flex flex-col gap-2 rounded-xl bg-brand-light p-4"
        >
          <h2 id={`${id}-token-title`} className="font-semibold">
            Your token
          </h2>
          <p className="font-mono text-xl font-bold" data-testid="token">
            {groupInFours(token)}
          </p>
          {units !== undefined ? (
            <p>
              Units: <span data-testid="units">{units}</span>
            </p>
          ) : null}
          <div className="flex flex-wrap items-center gap-2">
            <CopyButton text={token.replace(/[\s-]/g, '')} what="token" />
          </div>
        </section>
      ) : units !== undefined ? (
        <p>
          Units: <span data-testid="units">{units}</span>
        </p>
      ) : null}
      {pins?.length ? (
        <section aria-labelledby={`${id}-pins-title`} className="flex flex-col gap-2">
          <h2 id={`${id}-pins-title`} className="font-semibold">
            {pins.length > 1 ? 'Your PINs' : 'Your PIN'}
          </h2>
          {pins.map((pin, i) => (
            <div key={pin} className="flex flex-wrap items-center gap-2">
              <strong className="font-mono text-lg">{pin}</strong>
              <CopyButton text={pin} what={pins.length > 1 ? `PIN ${i + 1}` : 'PIN'} />
            </div>
          ))}
        </section>
      ) : null}
    </>
  );
}
