import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Hash } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { queryKeys, useUssdSettings } from '../api/queries.ts';
import { formatNairaNumber, shownPhone } from '../format.ts';
import { OnOffSwitch } from './on-off-switch.tsx';
import { PinStep, pinComplete } from './pin-step.tsx';
import { Button, ErrorNote, Waiting } from './ui.tsx';

// Settings' "USSD" (API.md 17.6): the wallet from a phone with no internet, by dialling the service
// code from the registered number. Off until the person switches it on, and either way the switch
// asks the transaction PIN (setUssdEnabled), as the CBN's USSD framework wants a person able to
// switch the channel off and nobody but them to switch it on. A wrong or locked PIN is said as on
// every other PIN step, and counts toward the same lock. The code to dial and the limits are the
// service's own (getUssdSettings: USSD_SERVICE_CODE, USSD_SINGLE_MAX, USSD_DAILY_MAX), so a service
// configured otherwise never has the app tell people another code or other limits.

type Me = Output<'getMe'>;

export function UssdSwitch({ me }: { me: Me }) {
  const queries = useQueryClient();
  const titleId = useId();
  const stateId = useId();
  const on = me.ussdEnabled;
  const ussd = useUssdSettings();
  const settings = ussd.data;
  /** Until the service has said which code, the words name none rather than guess one. */
  const dial = settings?.serviceCode ?? 'the USSD code';
  /** The PIN step, open while the person is switching. */
  const [asking, setAsking] = useState(false);
  const [pin, setPin] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const change = useMutation({
    mutationFn: (input: { enabled: boolean; pin: string }) => call('setUssdEnabled', input),
    onSuccess: (result) => {
      queries.setQueryData<Me>(queryKeys.me, (was) =>
        was === undefined ? was : { ...was, ussdEnabled: result.ussdEnabled },
      );
      setAsking(false);
      setDone(
        result.ussdEnabled
          ? `USSD is on. Dial ${dial} from ${shownPhone(me.phone)}.`
          : 'USSD is off. Dialling the code from your phone no longer reaches your wallet.',
      );
      return Promise.all([
        queries.invalidateQueries({ queryKey: queryKeys.me }),
        queries.invalidateQueries({ queryKey: queryKeys.ussd }),
      ]);
    },
  });

  function start() {
    setDone(null);
    setPin('');
    change.reset();
    setAsking(true);
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!pinComplete(pin)) return;
    change.mutate({ enabled: !on, pin });
    setPin('');
  }

  return (
    <section aria-labelledby={titleId} className="flex flex-col gap-3">
      <div className="flex items-center justify-between gap-3">
        <h2 id={titleId} className="flex items-center gap-2 text-lg font-semibold">
          <Hash aria-hidden="true" size={20} className="text-brand" />
          {settings ? `USSD (${settings.serviceCode})` : 'USSD'}
        </h2>
        <OnOffSwitch
          on={on}
          labelledBy={titleId}
          describedBy={stateId}
          expanded={asking}
          disabled={change.isPending}
          onClick={start}
        />
      </div>
      {settings ? (
        <>
          <p className="text-sm text-gray-700">
            Use your wallet from any phone, even without internet or a smartphone: dial {settings.serviceCode}{' '}
            from {shownPhone(me.phone)} to check your balance, buy airtime or data, and see your last 3
            transactions. Every payment asks your transaction PIN. By USSD you can pay at most{' '}
            {formatNairaNumber(settings.singleMax)} at a time and {formatNairaNumber(settings.dailyMax)} a
            day, within your daily limit. Only this phone number can use it.
          </p>
          <p data-testid="ussd-left-today" className="text-sm text-gray-700">
            {formatNairaNumber(settings.remainingToday)} left today by USSD
            {settings.usedToday > 0 ? ` (${formatNairaNumber(settings.usedToday)} paid today)` : ''}.
          </p>
        </>
      ) : null}
      {ussd.isPending ? <Waiting label="Loading the code to dial" /> : null}
      <ErrorNote error={ussd.error as CallError | null} />
      <p id={stateId} data-testid="ussd-state" className="font-medium">
        {on
          ? `On: dialling ${dial} from ${shownPhone(me.phone)} reaches your wallet.`
          : 'Off: dialling the code reaches nothing of yours. Switch it on to use it.'}
      </p>
      {asking ? (
        me.hasPin ? (
          <form
            className="flex flex-col gap-3"
            onSubmit={submit}
            noValidate
            aria-label="Confirm with your PIN"
          >
            <p>{on ? 'Type your PIN to switch USSD off.' : 'Type your PIN to switch USSD on.'}</p>
            <PinStep pin={pin} onPin={setPin} />
            <ErrorNote error={change.error as CallError | null} />
            <div className="flex flex-wrap gap-2">
              <Button type="submit" busy={change.isPending} disabled={!pinComplete(pin)}>
                {on ? 'Switch USSD off' : 'Switch USSD on'}
              </Button>
              <Button variant="secondary" onClick={() => setAsking(false)}>
                Cancel
              </Button>
            </div>
          </form>
        ) : (
          <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
            USSD payments are confirmed with your transaction PIN.{' '}
            <Link to="/pin" className="font-semibold underline">
              Set your PIN
            </Link>{' '}
            first, then come back here.
          </p>
        )
      ) : null}
      <p role="status" aria-live="polite" className="text-green-900" data-testid="ussd-saved">
        {done}
      </p>
    </section>
  );
}
