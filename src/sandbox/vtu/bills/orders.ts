import type { BillsService, BillsVariation } from '../bills-catalogue.ts';
import { electricityToken, examPins, meterHolder } from './products.ts';
import { type Answer, type Body, codeOnly, text, wireKobo } from './wire.ts';

// What a /pay body orders, product by product: what it costs the provider's balance, whose number
// decides the outcome, and what a delivered order carries. A body that does not make a valid order is
// refused with VTpass's code for what is wrong with it.

export type OrderPlan = {
  recipient: string;
  phone: string | null;
  productName: string;
  wholesaleKobo: bigint;
  quantity: number;
  extras(requestId: string): Record<string, unknown>;
};

type Refusal = { refusal: Answer };
type Planned = OrderPlan | Refusal;

/** The fields of a /pay body every product reads. */
type Fields = {
  service: BillsService;
  body: Body;
  phone: string | undefined;
  billersCode: string | undefined;
  variationCode: string | undefined;
  variation: BillsVariation | undefined;
};

const phonePattern = /^0\d{10}$/;
const examQuantityMax = 10;
const cableMonthsMax = 12;
const nothing = () => ({});

/** Reads a /pay body for its product: what it costs, whose number decides the outcome, what it delivers. */
export function orderFor(service: BillsService, body: Body): Planned {
  const variationCode = text(body.variation_code);
  const fields: Fields = {
    service,
    body,
    phone: text(body.phone)?.trim(),
    billersCode: text(body.billersCode)?.trim(),
    variationCode,
    variation: service.variations.find((item) => item.code === variationCode),
  };
  switch (service.category) {
    case 'airtime':
      return airtimeOrder(fields);
    case 'data':
      return dataOrder(fields);
    case 'tv-subscription':
      return cableOrder(fields);
    case 'electricity-bill':
      return electricityOrder(fields);
    case 'education':
      return examOrder(fields);
    case 'betting':
      return bettingOrder(fields);
  }
}

function airtimeOrder({ service, body, phone }: Fields): Planned {
  if (phone === undefined || !phonePattern.test(phone)) return refuse('011', 'INVALID ARGUMENTS');
  const amount = amountInRange(service, body);
  if (typeof amount !== 'bigint') return amount;
  return {
    recipient: phone,
    phone,
    productName: service.name,
    wholesaleKobo: amount,
    quantity: 1,
    extras: nothing,
  };
}

function dataOrder({ service, phone, billersCode, variation }: Fields): Planned {
  const recipient = billersCode ?? phone;
  if (recipient === undefined || !phonePattern.test(recipient)) return refuse('011', 'INVALID ARGUMENTS');
  if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
  return {
    recipient,
    phone: phone ?? recipient,
    productName: `${service.name} - ${variation.name}`,
    wholesaleKobo: variation.amountKobo,
    quantity: 1,
    extras: nothing,
  };
}

/** A renewal pays the amount asked; a plan pays its price for each month. */
function cableOrder({ service, body, phone, billersCode, variation }: Fields): Planned {
  if (billersCode === undefined || !/^\d{6,16}$/.test(billersCode)) return refuse('011', 'INVALID ARGUMENTS');
  const order = { recipient: billersCode, phone: phone ?? null, extras: nothing };
  if (text(body.subscription_type) === 'renew') {
    const amount = amountInRange(service, body);
    if (typeof amount !== 'bigint') return amount;
    return { ...order, productName: `${service.name} - Renewal`, wholesaleKobo: amount, quantity: 1 };
  }
  if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
  const months = quantityUpTo(body, cableMonthsMax);
  if (typeof months !== 'number') return months;
  return {
    ...order,
    productName: `${service.name} - ${variation.name}`,
    wholesaleKobo: variation.amountKobo * BigInt(months),
    quantity: months,
  };
}

function electricityOrder({ service, body, phone, billersCode, variationCode }: Fields): Planned {
  if (billersCode === undefined || !/^\d{6,16}$/.test(billersCode)) return refuse('011', 'INVALID ARGUMENTS');
  if (variationCode !== 'prepaid' && variationCode !== 'postpaid') {
    return refuse('010', 'VARIATION CODE DOES NOT EXIST');
  }
  const amount = amountInRange(service, body);
  if (typeof amount !== 'bigint') return amount;
  return {
    recipient: billersCode,
    phone: phone ?? null,
    productName: `${service.name} (${variationCode})`,
    wholesaleKobo: amount,
    quantity: 1,
    extras: (requestId) => ({
      ...meterHolder(service.serviceID, billersCode),
      ...(variationCode === 'prepaid'
        ? electricityToken(service.serviceID, requestId, amount)
        : { purchased_code: '' }),
    }),
  };
}

/** Exam pins: up to examQuantityMax a purchase, JAMB one, for a profile id (billersCode). */
function examOrder({ service, body, phone, billersCode, variation }: Fields): Planned {
  if (phone === undefined || !phonePattern.test(phone)) return refuse('011', 'INVALID ARGUMENTS');
  if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
  const jamb = service.serviceID === 'jamb';
  const quantity = quantityUpTo(body, jamb ? 1 : examQuantityMax);
  if (typeof quantity !== 'number') return quantity;
  if (jamb && (billersCode === undefined || billersCode === '')) return refuse('011', 'INVALID ARGUMENTS');
  return {
    recipient: phone,
    phone,
    productName: `${service.name} - ${variation.name}`,
    wholesaleKobo: variation.amountKobo * BigInt(quantity),
    quantity,
    extras: (requestId) => examPins(service.serviceID, requestId, quantity),
  };
}

function bettingOrder({ service, body, phone, billersCode }: Fields): Planned {
  if (billersCode === undefined || !/^[A-Za-z0-9]{4,20}$/.test(billersCode)) {
    return refuse('011', 'INVALID ARGUMENTS');
  }
  const amount = amountInRange(service, body);
  if (typeof amount !== 'bigint') return amount;
  return {
    recipient: billersCode,
    phone: phone ?? null,
    productName: `${service.name} Wallet Funding`,
    wholesaleKobo: amount,
    quantity: 1,
    extras: nothing,
  };
}

/** The body's quantity (1 when absent), when it is a whole number from 1 to quantityMax; else the refusal. */
function quantityUpTo(body: Body, quantityMax: number): number | Refusal {
  const quantity = body.quantity === undefined ? 1 : body.quantity;
  if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity < 1) {
    return refuse('031', 'BELOW MINIMUM QUANTITY ALLOWED');
  }
  if (quantity > quantityMax) return refuse('032', 'ABOVE MAXIMUM QUANTITY ALLOWED');
  return quantity;
}

/** The body's amount in kobo, when it lies within the service's range; else the refusal. */
function amountInRange(service: BillsService, body: Body): bigint | Refusal {
  const amount = wireKobo(body.amount);
  if (amount === null || amount <= 0n) return refuse('011', 'INVALID ARGUMENTS');
  if (amount < service.minimumKobo) return refuse('013', 'BELOW MINIMUM AMOUNT ALLOWED');
  if (amount > service.maximumKobo) return refuse('017', 'ABOVE MAXIMUM AMOUNT ALLOWED');
  return amount;
}

function refuse(code: string, description: string): Refusal {
  return { refusal: codeOnly(code, description) };
}
