import { useQueryClient } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Screen } from '../../components/ui.tsx';
import { NewPinFields, newPinReady } from './-new-pin-fields.tsx';

// PIN setup: four digits, typed twice; every payment asks for it last. (Changing it, or replacing a
// forgotten one, asks for an SMS code first: ./change.tsx.)

function PinSetup() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  return (
    <Screen title="Set your transaction PIN">
      <p>You will type this PIN last, to approve every payment. Do not share it with anyone.</p>
      <form
        className="flex flex-col gap-4"
        onSubmit={async (event) => {
          event.preventDefault();
          if (!newPinReady(pin, again)) return;
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
        <NewPinFields pin={pin} again={again} onPin={setPin} onAgain={setAgain} />
        <ErrorNote error={error} />
        <Button type="submit" busy={busy} disabled={!newPinReady(pin, again)}>
          Save PIN
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/pin/')({ beforeLoad: requireSignIn, component: PinSetup });
