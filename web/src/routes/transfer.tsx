import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { answeredRefusal, type CallError, call } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Field, Screen } from '../components/ui.tsx';
import { formatNaira, parseNaira } from '../format.ts';

// Send money to another billrail user (API.md section 14): the recipient's masked name is shown
// before the PIN, and the Idempotency-Key is made once per intent, reused on a retry.

function Transfer() {
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [amountText, setAmountText] = useState('');
  const [narration, setNarration] = useState('');
  const [pin, setPin] = useState('');
  const [recipient, setRecipient] = useState<{ name: string; nameVerified: boolean; key: string } | null>(
    null,
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const amount = parseNaira(amountText);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught as CallError);
      // A refusal was answered and nothing charged: the corrected try is a new intent.
      if (answeredRefusal(caught))
        setRecipient((found) => (found === null ? found : { ...found, key: crypto.randomUUID() }));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Screen title="Send money">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (recipient === null) {
            void act(async () => {
              const found = await call('lookupRecipient', { phone });
              setRecipient({ name: found.name, nameVerified: found.nameVerified, key: crypto.randomUUID() });
            });
          } else if (amount !== null) {
            void act(async () => {
              const sent = await call(
                'transferToUser',
                { phone, amount, pin, ...(narration.trim() === '' ? {} : { narration }) },
                { idempotencyKey: recipient.key },
              );
              await navigate({ to: '/', search: {}, state: { sent: sent.reference } as never });
            });
          }
        }}
      >
        <Field
          label="Their phone number"
          value={phone}
          onChange={(value) => {
            setPhone(value);
            setRecipient(null);
          }}
          inputMode="tel"
        />
        {recipient ? (
          <>
            <RecipientNote name={recipient.name} nameVerified={recipient.nameVerified} />
            <Field label="Amount (₦)" value={amountText} onChange={setAmountText} inputMode="decimal" />
            <Field label="Note (optional)" value={narration} onChange={setNarration} maxLength={100} />
            <Field
              label="Transaction PIN"
              value={pin}
              onChange={setPin}
              type="password"
              autoComplete="off"
              inputMode="numeric"
              maxLength={4}
            />
          </>
        ) : null}
        <ErrorNote error={error} />
        <Button
          type="submit"
          busy={busy}
          disabled={recipient !== null && (amount === null || !/^\d{4}$/.test(pin))}
        >
          {recipient === null ? 'Find' : amount === null ? 'Send' : `Send ${formatNaira(amount)}`}
        </Button>
      </form>
    </Screen>
  );
}

/** The service shows a person who gave no name by their phone, its middle hidden (0803****567). */
const maskedPhone = /^\d{4}\*{4}\d{3}$/;

/**
 * Who the money goes to, and how far to trust the name: a name verified with an NIN, or a warning
 * (set apart, not in the same look) when it is only what they typed, or when they gave none.
 */
function RecipientNote({ name, nameVerified }: { name: string; nameVerified: boolean }) {
  if (nameVerified) {
    return (
      <p className="rounded-lg bg-brand-light p-3">
        Sending to <strong>{name}</strong>
        <span className="block text-sm">Name verified with their NIN.</span>
      </p>
    );
  }
  return (
    <p className="rounded-lg border-2 border-amber-500 bg-amber-50 p-3 text-amber-950">
      Sending to <strong>{name}</strong>
      <span className="block text-sm">
        {maskedPhone.test(name)
          ? 'This person has not given a name, and none is verified.'
          : 'This name is the one they typed, not verified with an NIN.'}{' '}
        Make sure you know who owns this number before you send.
      </span>
    </p>
  );
}

export const Route = createFileRoute('/transfer')({ beforeLoad: requireSignIn, component: Transfer });
