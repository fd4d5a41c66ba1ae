import { z } from 'zod';
import { vtuProviderNames, vtuServices } from '../config.ts';
import { instantOutput } from '../money-schemas.ts';

// Request and answer shapes of the operators' pauses (API.md section 17.4, decision 0042), and the
// availability fields the catalogue's lists carry (a paused service is listed as unavailable).

/** The services a pause names: the routed services of config.ts (VTU_ROUTES), by their route names. */
const service = z.enum(vtuServices).describe('A routed service, by its name in VTU_ROUTES');
/** The providers a pause may name: the upstream parties of config.ts. */
const provider = z
  .enum(vtuProviderNames)
  .describe('Only purchases of the service routed to this provider are paused; absent: all of them');
const reason = z
  .string()
  .trim()
  .min(1)
  .max(500)
  .describe('Why, in words a person may be shown (the catalogue lists it beside the service)');

export const pauseServiceInput = z
  .object({ service, provider: provider.optional(), reason })
  .strict()
  .describe('Pausing what is paused already changes its reason');
export const resumeServiceInput = z.object({ service, provider: provider.optional() }).strict();
export const listPausesInput = z.object({}).strict();

export const pauseView = z.object({
  service: z.enum(vtuServices),
  provider: z.enum(vtuProviderNames).optional().describe('Absent: the service through every provider'),
  inEffect: z
    .boolean()
    .describe(
      "False for a provider's pause while the service is routed to another provider (VTU_ROUTES): it stops nothing until the service is routed there again",
    ),
  reason: z.string(),
  pausedBy: z.string().describe('The administrator who paused it, or last changed its reason'),
  pausedAt: instantOutput('Since when it is paused'),
  updatedAt: instantOutput('When its reason was last set'),
});
export type PauseView = z.infer<typeof pauseView>;

export const resumeServiceOutput = pauseView.extend({ resumedAt: instantOutput('When it was resumed') });
export const listPausesOutput = z.object({
  items: z.array(pauseView).describe('Every pause in force, by service, the service-wide one first'),
});

/**
 * What a list of a service's catalogue says of the service itself: whether it can be bought now
 * (false while an operator has paused it, or the provider it is routed to) and the operator's reason.
 */
export const availability = {
  available: z
    .boolean()
    .describe('False while an operator has paused the service: buying it answers 503 SERVICE_PAUSED'),
  pausedReason: z.string().optional().describe('Why the service is paused, while it is'),
};
