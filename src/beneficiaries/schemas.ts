import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
import { toE164 } from '../phone.ts';

// Request and answer shapes of beneficiaries (API.md section 16): the recipients a user chose to
// keep for the purchases and transfers they make again and again.

export const beneficiaryServices = [
  'airtime',
  'data',
  'electricity',
  'cable',
  'betting',
  'education',
  'transfer',
] as const;
export type BeneficiaryService = (typeof beneficiaryServices)[number];

/** API.md section 16: how many beneficiaries one user keeps at most. */
export const beneficiariesPerUserMax = 100;
/** `details` is a small flat object of strings: a disco and meter type, a cable provider, a company. */
export const detailsKeysMax = 10;
export const detailsValueLengthMax = 100;

const service = z.enum(beneficiaryServices);
const network = z.enum(['mtn', 'glo', 'airtel', '9mobile']);
const label = z.string().trim().min(1, 'a label of 1 to 40 characters').max(40, 'at most 40 characters');
const details = z
  .record(
    z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,39}$/, 'a key of letters, digits and _ (at most 40)'),
    z.string().trim().min(1).max(detailsValueLengthMax, `at most ${detailsValueLengthMax} characters`),
  )
  .refine((record) => Object.keys(record).length <= detailsKeysMax, {
    message: `at most ${detailsKeysMax} keys`,
  });

/** Meter and smartcard numbers: what verifyMeter and verifyCableIUC take, so a saved one can be checked. */
const digits = /^\d{6,20}$/;
/** A betting customer id: what fundBet takes. */
const bettingCustomerId = /^[A-Za-z0-9]{4,30}$/;

/** Services whose recipient is a phone, and which of them are sold per network. */
const phoneServices: ReadonlySet<BeneficiaryService> = new Set(['airtime', 'data', 'transfer', 'education']);
const networkServices: ReadonlySet<BeneficiaryService> = new Set(['airtime', 'data']);

/**
 * The recipient in the form the service keeps and the purchases take (E.164 for a phone), or the
 * words that say what the service expects instead.
 */
function normaliseRecipient(
  of: BeneficiaryService,
  recipient: string,
): { ok: true; value: string } | { ok: false; message: string } {
  if (phoneServices.has(of)) {
    const e164 = toE164(recipient);
    return e164 === null
      ? { ok: false, message: 'not a Nigerian mobile number (0803..., 234803... or +234803...)' }
      : { ok: true, value: e164 };
  }
  switch (of) {
    case 'electricity':
      return digits.test(recipient)
        ? { ok: true, value: recipient }
        : { ok: false, message: 'a meter number: 6 to 20 digits' };
    case 'cable':
      return digits.test(recipient)
        ? { ok: true, value: recipient }
        : { ok: false, message: 'a smartcard / IUC number: 6 to 20 digits' };
    case 'betting':
      return bettingCustomerId.test(recipient)
        ? { ok: true, value: recipient }
        : { ok: false, message: 'a betting customer id: 4 to 30 letters or digits' };
    default:
      throw new Error(`unreachable: ${of} has a phone recipient`);
  }
}

export const saveBeneficiaryInput = z
  .object({
    service,
    label,
    recipient: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .describe(
        'airtime, data, transfer and education: a Nigerian mobile number (kept in E.164); electricity: the meter number; cable: the smartcard / IUC number; betting: the customer id',
      ),
    network: network.optional().describe('airtime and data only'),
    details: details
      .optional()
      .describe(
        `A flat object of strings (at most ${detailsKeysMax} keys, values of at most ${detailsValueLengthMax} characters), e.g. {"disco": "ikeja-electric", "type": "prepaid"} or {"provider": "dstv"}`,
      ),
  })
  .strict()
  .transform((input, ctx) => {
    const recipient = normaliseRecipient(input.service, input.recipient);
    if (!recipient.ok) {
      ctx.addIssue({ code: 'custom', path: ['recipient'], message: recipient.message });
      return z.NEVER;
    }
    if (input.network !== undefined && !networkServices.has(input.service)) {
      ctx.addIssue({
        code: 'custom',
        path: ['network'],
        message: 'a network is kept for airtime and data only',
      });
      return z.NEVER;
    }
    return { ...input, recipient: recipient.value };
  });
export type SaveBeneficiaryRequest = z.output<typeof saveBeneficiaryInput>;

export const beneficiary = z.object({
  id: z.string(),
  service,
  label: z.string(),
  recipient: z.string(),
  network: network.optional(),
  details: z.record(z.string(), z.string()).optional(),
  createdAt: instantOutput(),
});
export type BeneficiaryView = z.infer<typeof beneficiary>;

export const listBeneficiariesInput = z.object({ service: service.optional() }).strict();
export const listBeneficiariesOutput = z.object({
  items: z.array(beneficiary).describe('Most recently saved first'),
});

export const deleteBeneficiaryInput = z.object({ id: z.uuid() }).strict();
export const deleteBeneficiaryOutput = z.object({ id: z.string() });
