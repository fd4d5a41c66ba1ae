import { z } from 'zod';
import { vtuProviderNames, vtuServices } from '../config.ts';
import { percentToBasisPoints } from '../money.ts';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';
import { availability } from '../pauses/schemas.ts';
import { priceLevelPattern, reservedPriceLevel } from './price-levels.ts';

// Schemas of the catalogue, pricing and look-up operations. Prices leave as RETAIL naira (`amount`,
// what buyData and subscribeCable expect back); wholesale prices never appear in a catalogue.

export const networkIds = ['mtn', 'glo', 'airtel', '9mobile'] as const;

const noInput = z.object({}).strict();
const network = z.enum(networkIds);
/** A catalogue id as the providers write them (dstv, ikeja-electric, bet9ja, 1xbet). */
const catalogueId = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'a catalogue id such as dstv');

const items = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });
/** A service's list, with whether the service can be bought now (an operator's pause, decision 0042). */
const serviceItems = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), ...availability });

const networkItem = z.object({ id: network, name: z.string() });
const namedItem = z.object({ id: z.string(), name: z.string() });

export const dataPlan = z.object({
  plan_id: z.string(),
  network,
  /** SME, CG, GIFTING, ... */
  planType: z.string(),
  name: z.string(),
  validity: z.string().nullable(),
  amount: nairaOutput('Retail price: what buyData charges, and what its amount must equal'),
});

export const cablePlan = z.object({
  plan_id: z.string(),
  identifier: z.string(),
  name: z.string(),
  amount: nairaOutput('Retail price: what subscribeCable charges'),
});

export const listNetworksInput = noInput;
export const listNetworksOutput = serviceItems(networkItem);

export const listDataPlanTypesInput = z.object({ network }).strict();
export const listDataPlanTypesOutput = serviceItems(
  z.object({ planType: z.string(), plans: z.number().int() }),
);

export const listDataPlansInput = z.object({ network }).strict();
export const listDataPlansForCategoryInput = z
  .object({ network, planType: z.string().trim().min(1).max(40) })
  .strict();
export const listDataPlansOutput = serviceItems(dataPlan);

export const listCableProvidersInput = noInput;
export const listCablePlansInput = z.object({ identifier: catalogueId }).strict();
export const listCablePlansOutput = serviceItems(cablePlan);

export const listNamedInput = noInput;
export const listNamedOutput = serviceItems(namedItem);

export const listBanksInput = noInput;
export const listBanksOutput = items(
  z.object({
    code: z.string().describe("The bank's code: submitKycTier3's bankCode"),
    name: z.string(),
  }),
).describe('Active Nigerian banks, one per code, sorted by name');

/** The exams buyEducationPin sells pins of (API.md section 5). */
export const examIds = ['waec', 'waec-registration', 'neco', 'nabteb', 'jamb'] as const;

export const listEducationPinsInput = z.object({ exam: z.enum(examIds) }).strict();
export const listEducationPinsOutput = serviceItems(
  z.object({
    variation: z.string().describe('The `variation` of buyEducationPin (jamb: utme, de)'),
    name: z.string(),
    amount: nairaOutput(
      'Retail price of one pin (markup applied): buyEducationPin charges quantity × this amount; a purchase whose amount differs is 409 PRICE_CHANGED with the price in details.amount',
    ),
  }),
);

const service = z.enum(vtuServices);
const provider = z.enum(vtuProviderNames);

export const quotePriceInput = z
  .object({
    service,
    provider: provider.optional(),
    wholesale: nairaInput('The provider’s price', { zeroAllowed: true }),
  })
  .strict();
export const quotePriceOutput = z.object({
  service,
  provider,
  wholesale: nairaOutput('The provider’s price'),
  markup: nairaOutput('What the markup adds'),
  retail: nairaOutput('What the person pays: wholesale plus markup'),
});

const percent = z
  .number()
  .min(0)
  .max(100)
  .refine((n) => percentToBasisPoints(n) !== null, { message: 'a percentage, at most two decimals' });

/** A price level's name (price-levels.ts): as stored, so nothing is trimmed or lowercased quietly. */
export const priceLevel = z
  .string()
  .regex(
    priceLevelPattern,
    'a level name: 1 to 32 lowercase letters, digits and inner hyphens, such as reseller',
  )
  .refine((name) => name !== reservedPriceLevel, {
    message: 'default names the markups without a level: leave level out to set them',
  });

export const setMarkupInput = z
  .object({
    service,
    provider: provider.optional(),
    level: priceLevel.optional().describe('the price level the markup is for; left out, the default markup'),
    flat: nairaInput('Flat markup added to every price', { zeroAllowed: true }).optional(),
    percent: percent.optional(),
  })
  .strict()
  .refine((input) => input.flat !== undefined || input.percent !== undefined, {
    message: 'give flat, percent or both',
    path: ['flat'],
  });
export const markupOutput = z.object({
  level: z.string().nullable().describe('null: the default markup, paid by every user whose level has none'),
  service,
  // OpenAPI 3.0 admits null in an enum only when the enum lists it, and zod's openapi-3.0 output
  // renders `.nullable()` as `nullable: true` beside the enum without it: so the enum is given.
  provider: provider
    .nullable()
    .meta({ enum: [...provider.options, null] })
    .describe('null: the markup of every provider of the service that has no markup of its own'),
  flat: nairaOutput('Flat markup added to every price'),
  percent: z.number(),
  updatedAt: instantOutput(),
});

/** Smartcard / IUC and meter numbers: digits only. */
const accountNumber = z
  .string()
  .trim()
  .regex(/^\d{6,20}$/, '6 to 20 digits');

export const verifyCableInput = z.object({ iuc: accountNumber, identifier: catalogueId }).strict();
export const verifyMeterInput = z
  .object({ meter: accountNumber, plan: catalogueId, type: z.enum(['prepaid', 'postpaid']) })
  .strict();
export const verifyBetInput = z
  .object({
    betting_company: catalogueId,
    customer_id: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,50}$/, 'letters, digits, - and _ only'),
  })
  .strict();
export const verifyOutput = z.object({
  found: z.literal(true),
  name: z.string(),
  /** What else the provider said about the customer (address, current bouquet, ...). */
  details: z.record(z.string(), z.string()),
});

export const setUserPriceLevelInput = z
  .object({
    userId: z.uuid(),
    level: priceLevel
      .nullable()
      .describe('a level that has a markup (adminSetMarkup); null: the default prices'),
  })
  .strict();
export const setUserPriceLevelOutput = z.object({ userId: z.uuid(), level: z.string().nullable() });

export const listPriceLevelsInput = noInput;
export const listPriceLevelsOutput = items(
  z.object({
    level: z.string().nullable().describe('null: the default markups, first'),
    /** How many users are on the level (for null: on no level). */
    users: z.number().int(),
    markups: z.array(markupOutput.omit({ level: true })),
  }),
);
