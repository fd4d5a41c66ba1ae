import type { FastifyInstance, FastifyRequest } from 'fastify';
import { koboToNaira } from '../../../money.ts';
import { type BillsService, billsServiceById, renewablePlans } from '../bills-catalogue.ts';
import { customerAddress, customerName } from './products.ts';
import { asBody, codeOnly, digitsFrom, routeOptions, text } from './wire.ts';

// VTpass's /merchant-verify: any number resolves to a name made from its digits, except one ending in
// 9: `content.error` with WrongBillersCode true (not found). 9 is not an outcome digit, so every
// outcome stays reachable for a number that verifies. Each category answers with its own fields: a
// smartcard's bouquet and renewal amount, a meter's address and type, a betting account's id.

export function registerVerifyRoutes(api: FastifyInstance): void {
  api.post('/merchant-verify', routeOptions, async (request) => merchantVerify(request));
}

function merchantVerify(request: FastifyRequest) {
  const body = asBody(request.body);
  const billersCode = text(body.billersCode)?.trim();
  const service = billsServiceById.get(text(body.serviceID) ?? '');
  if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
  if (billersCode === undefined || billersCode === '') return codeOnly('011', 'INVALID ARGUMENTS');
  const type = text(body.type);
  if (service.category === 'electricity-bill' && type !== 'prepaid' && type !== 'postpaid') {
    return codeOnly('011', 'INVALID ARGUMENTS');
  }
  if (billersCode.endsWith('9')) {
    return {
      code: '000',
      content: {
        error: 'This number is invalid. Please check the number and try again.',
        WrongBillersCode: true,
      },
    };
  }
  return { code: '000', content: verifiedCustomer(service, billersCode, type ?? '') };
}

function verifiedCustomer(service: BillsService, number: string, type: string): Record<string, unknown> {
  const name = customerName(number);
  const seed = Number.parseInt(digitsFrom(`customer:${number}`, 4), 10);
  switch (service.category) {
    case 'tv-subscription': {
      const plans = renewablePlans[service.serviceID] ?? [];
      const code = plans[seed % plans.length];
      const plan = service.variations.find((item) => item.code === code);
      return {
        Customer_Name: name,
        Status: 'Open',
        Due_Date: '2026-12-31T00:00:00',
        Customer_Number: digitsFrom(`customer-number:${number}`, 9),
        Customer_Type: service.serviceID.toUpperCase(),
        Current_Bouquet: plan?.name ?? 'None',
        Current_Bouquet_Code: plan?.code ?? '',
        Renewal_Amount: plan === undefined ? 0 : koboToNaira(plan.amountKobo),
      };
    }
    case 'electricity-bill':
      return {
        Customer_Name: name,
        Address: customerAddress(number),
        Meter_Number: number,
        Customer_Arrears: '0.00',
        Minimum_Amount: koboToNaira(service.minimumKobo),
        Min_Purchase_Amount: koboToNaira(service.minimumKobo),
        Can_Vend: 'yes',
        Business_Unit: 'Central',
        Customer_Account_Type: 'NMD',
        Meter_Type: type.toUpperCase(),
        WrongBillersCode: false,
      };
    default:
      return {
        Customer_Name: name,
        Customer_ID: number,
        Minimum_Amount: koboToNaira(service.minimumKobo),
      };
  }
}
