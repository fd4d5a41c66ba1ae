import type { FastifyInstance, FastifyRequest } from 'fastify';
import { koboToNaira } from '../../../money.ts';
import { billsServiceById, billsServices, categoryNames, nairaText } from '../bills-catalogue.ts';
import type { SandboxBillsState } from './state.ts';
import { type Body, codeOnly, routeOptions, text } from './wire.ts';

// VTpass's catalogue and balance: /service-categories, /services?identifier=<category>,
// /service-variations?serviceID=<service> (each service's variations under its own spelling of the
// key, as VTpass writes them) and /balance.

export function registerCatalogueRoutes(api: FastifyInstance, state: SandboxBillsState): void {
  api.get('/service-categories', routeOptions, async () => ({
    response_description: '000',
    content: Object.entries(categoryNames).map(([identifier, name]) => ({ identifier, name })),
  }));
  api.get('/services', routeOptions, async (request) => services(request));
  api.get('/service-variations', routeOptions, async (request) => serviceVariations(request));
  api.get('/balance', routeOptions, async () => ({
    code: 1,
    contents: { balance: koboToNaira(state.balanceKobo) },
  }));
}

function services(request: FastifyRequest) {
  const identifier = text((request.query as Body).identifier);
  const found = billsServices.filter((service) => service.category === identifier);
  if (found.length === 0) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
  return {
    response_description: '000',
    content: found.map((service) => ({
      serviceID: service.serviceID,
      name: service.name,
      minimium_amount: nairaText(service.minimumKobo),
      maximum_amount: nairaText(service.maximumKobo),
      convinience_fee: '0 %',
      product_type: service.fixedPrice ? 'fix' : 'flat',
      image: `https://sandbox.vtpass.com/resources/products/200X200/${service.serviceID}.jpg`,
    })),
  };
}

function serviceVariations(request: FastifyRequest) {
  const service = billsServiceById.get(text((request.query as Body).serviceID) ?? '');
  if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
  return {
    response_description: '000',
    content: {
      ServiceName: service.name,
      serviceID: service.serviceID,
      convinience_fee: 'N0.00',
      [service.spelling]: service.variations.map((variation) => ({
        variation_code: variation.code,
        name: variation.name,
        variation_amount: nairaText(variation.amountKobo),
        fixedPrice: service.fixedPrice ? 'Yes' : 'No',
      })),
    },
  };
}
