import { useState } from 'react';
import { toE164 } from '../../../src/shared/phone-number.ts';
import { localPhone } from '../../../src/shared/prefixes.ts';
import { useMe } from '../api/queries.ts';
import { Field } from './ui.tsx';

// The phone a provider texts its receipt, token or pins to: the person's own number unless they type
// another, so most people never touch the field.

export type ContactPhone = { phone: string; setPhone: (phone: string) => void; valid: boolean };

export function useContactPhone(initial?: string): ContactPhone {
  const me = useMe();
  const [typed, setTyped] = useState<string | null>(initial ?? null);
  const phone = typed ?? (me.data ? localPhone(me.data.phone) : '');
  return { phone, setPhone: setTyped, valid: toE164(phone) !== null };
}

export function ContactPhoneField({ contact, hint }: { contact: ContactPhone; hint: string }) {
  return (
    <Field
      label="Phone number"
      value={contact.phone}
      onChange={contact.setPhone}
      inputMode="tel"
      autoComplete="tel"
      hint={hint}
      error={contact.phone !== '' && !contact.valid ? 'Type a number such as 0803 123 4567' : undefined}
    />
  );
}
