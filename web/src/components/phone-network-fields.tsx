import { localPhone } from '../../../src/shared/prefixes.ts';
import { useMe } from '../api/queries.ts';
import { type NetworkChoice, NetworkPicker, phoneHint } from './network-picker.tsx';
import { Button, Field } from './ui.tsx';

// The phone number of a purchase sold per network (airtime, data, airtime to cash): the number, with
// its network found as it is typed, "My number" one tap away, and the network picker to override it.

export function PhoneNetworkFields(props: {
  phone: string;
  onPhone: (phone: string) => void;
  choice: NetworkChoice;
  label?: string;
  /** Replaces the usual hint (the network found, or what a number looks like). */
  hint?: string;
}) {
  const me = useMe();
  const typed = (phone: string) => {
    props.onPhone(phone);
    // A new number has its own network: an earlier pick no longer applies.
    props.choice.choose(null);
  };
  return (
    <>
      <Field
        label={props.label ?? 'Phone number'}
        value={props.phone}
        onChange={typed}
        inputMode="tel"
        autoComplete="tel"
        hint={props.hint ?? phoneHint(props.choice)}
      />
      {me.data ? (
        <Button variant="secondary" onClick={() => typed(localPhone(me.data.phone))}>
          My number
        </Button>
      ) : null}
      <NetworkPicker choice={props.choice} />
    </>
  );
}
