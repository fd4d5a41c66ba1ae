import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { examIds } from '../catalogue/schemas.ts';
import { vtuProviderNames, vtuServices } from '../config.ts';
import { dateRangeFields, requireOrderedRange } from '../date-filter.ts';
import type { ErrorCode } from '../errors.ts';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';
import { availability } from '../pauses/schemas.ts';
import { nigerianPhone } from '../phone.ts';

// Request and answer shapes of the six purchases and their reads (API.md section 5).

/**
 * What every purchase can be refused by: the tier and PIN in authorisedMarkupOf, the debit in
 * acceptPurchase, with a frozen account (the debit rule accountNotFrozen) and the CBN daily debit
 * limit (limits' dailyDebitRule, API.md 17.2), and an operator's pause
 * of its service or provider (asked before the PIN and again before the debit).
 */
export const purchaseErrors: readonly ErrorCode[] = [
  'KYC_TIER_REQUIRED',
  'PIN_NOT_SET',
  'INVALID_PIN',
  'PIN_LOCKED',
  'INSUFFICIENT_FUNDS',
  'ACCOUNT_FROZEN',
  'LIMIT_EXCEEDED',
  'SERVICE_PAUSED',
];

/** What a purchase charges: its price, or the face value asked for plus any markup. */
const naira = nairaInput('Amount charged to the wallet');
const network = z.enum(['mtn', 'glo', 'airtel', '9mobile']);
const code = z.string().trim().min(1).max(64);
/** Meter, smartcard and betting account numbers: digits (and for betting, letters) only. */
const accountNumber = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9]{4,30}$/, '4-30 letters or digits');

/** Airtime face value bounds in naira (the bills provider's own limits). */
export const airtimeNairaMin = 50;
export const airtimeNairaMax = 50_000;
/** SPEC.md "Limits": the minimum electricity purchase. */
export const electricityNairaMin = 1_000;

export const buyAirtimeInput = z
  .object({
    network,
    phone: nigerianPhone,
    amount: nairaInput('Airtime to buy', { minimum: airtimeNairaMin, maximum: airtimeNairaMax }),
    pin,
  })
  .strict();
export const buyDataInput = z
  .object({ network, plan_id: code, phone: nigerianPhone, amount: naira, pin })
  .strict();
export const subscribeCableInput = z
  .object({
    identifier: z.enum(['dstv', 'gotv', 'startimes', 'showmax']),
    iuc: accountNumber,
    plan_id: code,
    amount: naira,
    phone: nigerianPhone,
    subscription_type: z.enum(['change', 'renew']).default('change'),
    pin,
  })
  .strict();
export const buyElectricityInput = z
  .object({
    plan: code,
    meter: accountNumber,
    type: z.enum(['prepaid', 'postpaid']),
    amount: nairaInput('Electricity to buy', { minimum: electricityNairaMin }),
    phone: nigerianPhone,
    pin,
  })
  .strict();
export const fundBetInput = z
  .object({ betting_company: code, customer_id: accountNumber, amount: naira, pin })
  .strict();
export const buyEducationPinInput = z
  .object({
    exam: z.enum(examIds),
    variation: code.optional(),
    quantity: z.number().int().min(1).max(10),
    amount: naira,
    phone: nigerianPhone,
    pin,
    profile_id: accountNumber.optional(),
  })
  .strict();

// The services API.md section 14 names operations for.

export const listSocialServicesInput = z
  .object({ category: z.string().trim().min(1).max(100).optional() })
  .strict();
export const socialService = z.object({
  id: z.string(),
  name: z.string(),
  category: z.string(),
  rate: nairaOutput('Retail price of 1,000 units'),
  min: z.number().int(),
  max: z.number().int(),
});
export const listSocialServicesOutput = z.object({ items: z.array(socialService), ...availability });

export const buySocialServiceInput = z
  .object({
    serviceId: code,
    link: z.string().trim().min(1).max(2_000),
    quantity: z.number().int().positive().max(1_000_000_000),
    amount: naira,
    pin,
  })
  .strict();

/** API.md section 14: what one airtime-to-cash sale may be, naira. */
export const airtimeToCashNairaMin = 100;
export const airtimeToCashNairaMax = 50_000;

/** A GET's query carries text: the amount is read as a number from it. */
const queryNaira = nairaInput('Airtime to sell', {
  minimum: airtimeToCashNairaMin,
  maximum: airtimeToCashNairaMax,
  fromQuery: true,
});
export const quoteAirtimeToCashInput = z.object({ network, amount: queryNaira }).strict();
export const quoteAirtimeToCashOutput = z.object({
  amount: nairaOutput('Airtime to sell'),
  payout: nairaOutput('What the wallet is credited once the airtime arrives'),
  ratePercent: z.number(),
  sendTo: z.string(),
  ...availability,
});
export const sellAirtimeInput = z
  .object({
    network,
    phone: nigerianPhone,
    amount: nairaInput('Airtime to sell', { minimum: airtimeToCashNairaMin, maximum: airtimeToCashNairaMax }),
    pin,
  })
  .strict();

export const vtuTransaction = z.object({
  id: z.string(),
  reference: z.string(),
  status: z.enum(['processing', 'success', 'failed']),
  service: z.string(),
  provider: z.string(),
  network: z.string().optional(),
  recipient: z.string(),
  amount: nairaOutput('Amount charged (a sale of airtime: the payout)'),
  direction: z.enum(['debit', 'credit']),
  refunded: nairaOutput('Amount refunded to the wallet').optional(),
  token: z.string().optional(),
  units: z.string().optional(),
  pins: z.array(z.string()).optional(),
  customerName: z
    .string()
    .optional()
    .describe(
      'Electricity, cable, betting: the holder of the meter, smartcard or account, as the provider named them (absent when it did not)',
    ),
  failureReason: z.string().optional(),
  description: z.string(),
  order: z
    .object({
      provider: z.string().optional().describe('Disco, cable provider, betting company or exam'),
      plan: z.string().optional().describe('Data plan, cable bouquet, exam variation or social service'),
      type: z.string().optional().describe('Meter type (prepaid, postpaid) or cable subscription type'),
      faceValue: nairaOutput(
        'Amount asked for (airtime, electricity, betting, airtime sold), before any markup',
      ).optional(),
      quantity: z.number().int().optional(),
    })
    .optional()
    .describe('What was ordered, in the buy operation’s own terms, so that it can be ordered again'),
  createdAt: instantOutput(),
  updatedAt: instantOutput(),
});

export const listMyVtuTransactionsInput = z
  .object({
    ...pageInput,
    status: z.enum(['processing', 'success', 'failed']).optional(),
    service: z
      .enum(['airtime', 'data', 'cable', 'electricity', 'betting', 'education', 'airtime_to_cash', 'social'])
      .optional(),
    ...dateRangeFields,
  })
  .strict()
  .superRefine(requireOrderedRange);

export const listMyVtuTransactionsOutput = z.object({
  items: z.array(vtuTransaction),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

export const getMyVtuTransactionInput = z.object({ id: z.uuid() }).strict();

/** The operators' list of everyone's purchases (adminListPurchases, issue 40), filtered as an incident asks. */
export const adminListPurchasesInput = z
  .object({
    ...pageInput,
    status: z.enum(['processing', 'success', 'failed']).optional(),
    service: z.enum(vtuServices).optional(),
    provider: z.enum(vtuProviderNames).optional().describe('The provider that served it (VTU_ROUTES)'),
    userId: z.uuid().optional().describe('Only this person’s purchases'),
    ...dateRangeFields,
  })
  .strict()
  .superRefine(requireOrderedRange);

export const operatorPurchaseView = z.object({
  id: z.uuid(),
  reference: z.string(),
  userId: z.uuid(),
  service: z.string(),
  provider: z.string(),
  network: z.string().nullable(),
  recipient: z.string(),
  direction: z.enum(['debit', 'credit']),
  amount: nairaOutput('Amount charged (a sale of airtime: the payout)'),
  status: z.enum(['processing', 'success', 'failed']),
  failureReason: z.string().nullable().describe('A failed purchase: the reason its provider gave'),
  createdAt: instantOutput(),
  completedAt: instantOutput('When it settled; null while processing').nullable(),
});

export const adminListPurchasesOutput = z.object({
  items: z.array(operatorPurchaseView),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  counts: z
    .array(
      z.object({
        provider: z.string(),
        status: z.enum(['processing', 'success', 'failed']),
        failureReason: z.string().nullable(),
        count: z.number().int(),
      }),
    )
    .describe(
      'Every purchase the filter matches (not only this page), counted by provider, status and failure reason, the largest first: with status=failed, what the providers refuse and how often',
    ),
});
