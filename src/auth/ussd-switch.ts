import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';

// The person's switch of the USSD channel (API.md 17.6; the CBN's USSD framework asks that a person can
// switch USSD off). Off by default. Both ways take the PIN, judged by the same check and lockout as a
// payment (verifyTransactionPin): turning it on opens a way to pay, and turning it off is as much the
// account holder's decision. The channel reads the column on every callback, so the change holds from
// the next one.

export type UssdSwitchDeps = {
  db: Kysely<DB>;
  clock: Clock;
  /** The PIN's check and lockout, as the purchases' (pin.ts, through the module's deps). */
  verifyTransactionPin: (userId: string, pin: string) => Promise<void>;
};

export async function setUssdEnabled(
  db: Kysely<DB>,
  userId: string,
  enabled: boolean,
  now: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ ussd_enabled: enabled, updated_at: now })
    .where('id', '=', userId)
    .returning('ussd_enabled')
    .executeTakeFirst();
  if (row === undefined) throw notFound('user');
  return row.ussd_enabled;
}

export const ussdSwitchOperations = (deps: UssdSwitchDeps) => [
  defineOperation({
    name: 'setUssdEnabled',
    method: 'POST',
    auth: 'user',
    summary: 'Switch the USSD channel (dialling the service code from your phone) on or off, with your PIN',
    tags: ['accounts'],
    input: s.setUssdEnabledInput,
    output: s.setUssdEnabledOutput,
    errors: ['INVALID_PIN', 'PIN_LOCKED', 'PIN_NOT_SET', 'NOT_FOUND'],
    handler: async ({ caller, input }) => {
      await deps.verifyTransactionPin(caller.userId, input.pin);
      return { ussdEnabled: await setUssdEnabled(deps.db, caller.userId, input.enabled, deps.clock.now()) };
    },
  }),
];
