import type { Clock } from '../clock.ts';
import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { type UssdSettingsDeps, ussdSettingsOf } from './settings.ts';

// The USSD channel's operation in the app (API.md 17.6): the person's Settings read the code and the
// limits from here, so that a service configured with another USSD_SERVICE_CODE, USSD_SINGLE_MAX or
// USSD_DAILY_MAX tells people what it does. Switching the channel is auth's (setUssdEnabled), since
// the switch is a column of the user.

export type UssdOperationDeps = UssdSettingsDeps & { clock: Clock };

export const ussdOperations = (deps: UssdOperationDeps) => [
  defineOperation({
    name: 'getUssdSettings',
    method: 'GET',
    auth: 'user',
    summary:
      "The USSD channel as this service runs it: whether you switched it on, the code to dial, the most one payment and one Africa/Lagos day's payments may charge (naira), and what today's USSD payments used and left",
    tags: ['accounts'],
    input: s.getUssdSettingsInput,
    output: s.ussdSettingsView,
    errors: ['NOT_FOUND'],
    handler: ({ caller }) => ussdSettingsOf(deps, caller.userId, deps.clock.now()),
  }),
];
