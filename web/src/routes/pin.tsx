import { useQueryClient } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Field, Screen } from '../components/ui.tsx';

// PIN setup: four digits, typed twice; every payment asks for it last.

function PinSetup() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const mismatch = again.length === 4 && pin !== again ? 'The two PINs are not the same' : undefined;

  return (
    <Screen title="Set your transaction PIN">
      <p>You will type this PIN last, to approve every payment. Do not share it with anyone.</p>
      <form
        className="flex flex-col gap-4"
        onSubmit={async (event) => {
          event.preventDefault();
          if (pin !== again || !/^\d{4}$/.test(pin)) return;
          setBusy(true);
          setError(null);
          try {
            await call('setTransactionPin', { pin });
            // The service has the PIN now: say so before home reads it, or home would send us back here.
            queries.setQueryData<Output<'getMe'>>(['me'], (me) =>
              me === undefined ? me : { ...me, hasPin: true },
            );
            await navigate({ to: '/' });
          } catch (caught) {
            setError(caught as CallError);
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          label="New PIN"
          value={pin}
          onChange={setPin}
          type="password"
          autoComplete="new-password"
          inputMode="numeric"
          maxLength={4}
        />
        <Field
          label="Type it again"
          value={again}
          onChange={setAgain}
          type="password"
          autoComplete="new-password"
          inputMode="numeric"
          maxLength={4}
          error={mismatch}
        />
        <ErrorNote error={error} />
        <Button type="submit" busy={busy} disabled={!/^\d{4}$/.test(pin) || pin !== again}>
          Save PIN
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/pin')({ beforeLoad: requireSignIn, component: PinSetup });
