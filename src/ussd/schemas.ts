import { z } from 'zod';
import { nairaOutput } from '../money-schemas.ts';

// Request and answer shapes of the USSD channel's operations (API.md 17.6).

export const getUssdSettingsInput = z.object({}).strict();

/**
 * What the app's Settings tells a person about the channel, from the service's configuration
 * (USSD_SERVICE_CODE, USSD_SINGLE_MAX, USSD_DAILY_MAX) rather than from defaults the app would have
 * to guess, and what is left of today's USSD limit.
 */
export const ussdSettingsView = z.object({
  enabled: z.boolean().meta({
    description: 'The person switched the channel on (setUssdEnabled; the same as getMe.ussdEnabled)',
  }),
  serviceCode: z
    .string()
    .meta({ description: 'The code to dial from the registered phone', example: '*384*2255#' }),
  singleMax: nairaOutput('The most one USSD payment may charge (USSD_SINGLE_MAX)'),
  dailyMax: nairaOutput('The most USSD payments may charge in an Africa/Lagos day (USSD_DAILY_MAX)'),
  usedToday: nairaOutput("What today's (Africa/Lagos) USSD payments charged, failed ones given back"),
  remainingToday: nairaOutput(
    "What USSD payments may still charge today: dailyMax less usedToday, never below 0 (the account's own daily limit, getAccountLimits, may be tighter)",
  ),
});
