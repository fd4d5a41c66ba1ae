import { useState } from 'react';
import type { Network } from '../../../src/shared/networks.ts';
import { localPhone } from '../../../src/shared/prefixes.ts';
import { useMe } from '../api/queries.ts';
import type { Recipient } from './beneficiaries.tsx';
import { type NetworkChoice, NetworkPicker, phoneHint, useNetworkChoice } from './network-picker.tsx';
import { Button, Field } from './ui.tsx';

// The phone number of a purchase sold per network (airtime, data, airtime to cash): the number, with
// its network found as it is typed, "My number" one tap away, the network picker to override it, and
// a saved or recent number filling both at once.

export type PhoneLine = {
  phone: string;
  setPhone: (phone: string) => void;
  choice: NetworkChoice;
  network: Network | null;
  /** Fills the number and its network from a beneficiary. */
  pick: (picked: Recipient) => void;
  /** The number and network as a beneficiary keeps them ("Save as"). */
  kept: Recipient;
};

export function usePhoneLine(prefill: { recipient?: string; network?: string }): PhoneLine {
  const [phone, setPhone] = useState(prefill.recipient ?? '');
  const choice = useNetworkChoice(phone, prefill.network);
  const { network } = choice;
  return {
    phone,
    setPhone,
    choice,
    network,
    pick: (picked) => {
      setPhone(picked.recipient);
      choice.choose(picked.network ?? null);
    },
    kept: { recipient: phone, ...(network === null ? {} : { network }) },
  };
}

export function PhoneNetworkFields(props: {
  line: PhoneLine;
  label?: string;
  /** Replaces the usual hint (the network found, or what a number looks like). */
  hint?: string;
}) {
  const { line } = props;
  const me = useMe();
  const typed = (phone: string) => {
    line.setPhone(phone);
    // A new number has its own network: an earlier pick no longer applies.
    line.choice.choose(null);
  };
  return (
    <>
      <Field
        label={props.label ?? 'Phone number'}
        value={line.phone}
        onChange={typed}
        inputMode="tel"
        autoComplete="tel"
        hint={props.hint ?? phoneHint(line.choice)}
      />
      {me.data ? (
        <Button variant="secondary" onClick={() => typed(localPhone(me.data.phone))}>
          My number
        </Button>
      ) : null}
      <NetworkPicker choice={line.choice} />
    </>
  );
}
