import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { lagosDate } from '../lagos-time.ts';
import { koboToNaira } from '../money.ts';
import { ussdPaidOn } from './payments.ts';

// The channel as the app's Settings shows it (getUssdSettings): whether the person switched it on,
// the code to dial and the CBN USSD framework's limits as this service is configured, and what today's
// USSD payments used of the daily one: the same sum the payments are judged by (payments.ts), so the
// app never promises room a payment would be refused.

export type UssdSettingsDeps = {
  db: Kysely<DB>;
  serviceCode: string;
  singleMaxKobo: bigint;
  dailyMaxKobo: bigint;
  /** Whether the user switched USSD on (auth's table, read through its api); undefined: no such user. */
  ussdEnabledOf: (userId: string) => Promise<boolean | undefined>;
};

export type UssdSettings = {
  enabled: boolean;
  serviceCode: string;
  singleMax: number;
  dailyMax: number;
  usedToday: number;
  remainingToday: number;
};

export async function ussdSettingsOf(
  deps: UssdSettingsDeps,
  userId: string,
  now: Date,
): Promise<UssdSettings> {
  const enabled = await deps.ussdEnabledOf(userId);
  if (enabled === undefined) throw notFound('user');
  const usedKobo = await ussdPaidOn(deps.db, userId, lagosDate(now));
  // A lowered USSD_DAILY_MAX can leave a day's payments above it: nothing is left, never less.
  const remainingKobo = deps.dailyMaxKobo > usedKobo ? deps.dailyMaxKobo - usedKobo : 0n;
  return {
    enabled,
    serviceCode: deps.serviceCode,
    singleMax: koboToNaira(deps.singleMaxKobo),
    dailyMax: koboToNaira(deps.dailyMaxKobo),
    usedToday: koboToNaira(usedKobo),
    remainingToday: koboToNaira(remainingKobo),
  };
}
