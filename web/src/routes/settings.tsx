import { useQueryClient } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Screen } from '../components/ui.tsx';
import { disablePush, enablePush, pushSupported } from '../push.ts';

// Settings: push notifications on this device, and signing out (the session ends at the service too).

function Settings() {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const [pushState, setPushState] = useState<string | null>(null);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(caught as CallError);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Screen title="Settings">
      <ErrorNote error={error} />
      <h2 className="text-lg font-semibold">Notifications on this phone</h2>
      {pushSupported() ? (
        <div className="flex gap-2">
          <Button busy={busy} onClick={() => act(async () => setPushState(await enablePush()))}>
            Turn on
          </Button>
          <Button variant="secondary" onClick={() => act(async () => setPushState(await disablePush()))}>
            Turn off
          </Button>
        </div>
      ) : (
        <p>This browser cannot show notifications.</p>
      )}
      <p role="status" aria-live="polite">
        {pushState}
      </p>
      <Button
        variant="secondary"
        busy={busy}
        onClick={() =>
          act(async () => {
            await call('signOut', {}).catch(() => undefined);
            session.clear();
            queries.clear();
            localStorage.clear();
            await navigate({ to: '/sign-in', search: {} });
          })
        }
      >
        Sign out
      </Button>
    </Screen>
  );
}

export const Route = createFileRoute('/settings')({ beforeLoad: requireSignIn, component: Settings });
