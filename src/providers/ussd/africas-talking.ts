import { toE164 } from '../../shared/phone-number.ts';
import { type UssdGateway, type UssdParse, type UssdScreen, ussdFieldLimits } from './ussd-gateway.ts';

// Africa's Talking's USSD callback (its documentation, "USSD: handle sessions"): a form POST of
// sessionId, serviceCode, phoneNumber (+234...), networkCode (MCC-MNC) and text, every input so far
// joined by `*` ('' on the first screen). The answer is text/plain starting `CON ` for another screen
// or `END ` for the last.

const field = (fields: Record<string, unknown>, name: string): string | undefined => {
  const value = fields[name];
  return typeof value === 'string' ? value : undefined;
};

/** Reads the form into a step; a missing or oversized field is refused with why. */
export function parseAfricasTalking(fields: unknown): UssdParse {
  if (typeof fields !== 'object' || fields === null) return { ok: false, reason: 'no form fields' };
  const form = fields as Record<string, unknown>;
  const sessionId = field(form, 'sessionId');
  const serviceCode = field(form, 'serviceCode');
  const phoneNumber = field(form, 'phoneNumber');
  const text = field(form, 'text') ?? '';
  const networkCode = field(form, 'networkCode');
  if (sessionId === undefined || sessionId === '' || sessionId.length > ussdFieldLimits.sessionIdLengthMax)
    return { ok: false, reason: 'sessionId' };
  if (serviceCode === undefined || serviceCode.length > ussdFieldLimits.serviceCodeLengthMax)
    return { ok: false, reason: 'serviceCode' };
  if (phoneNumber === undefined) return { ok: false, reason: 'phoneNumber' };
  if (text.length > ussdFieldLimits.textLengthMax) return { ok: false, reason: 'text' };
  const inputs = text === '' ? [] : text.split('*');
  if (inputs.length > ussdFieldLimits.inputsMax) return { ok: false, reason: 'text' };
  return {
    ok: true,
    request: {
      sessionId,
      serviceCode,
      phone: toE164(phoneNumber),
      networkCode: networkCode !== undefined && /^\d{5,6}$/.test(networkCode) ? networkCode : null,
      inputs,
    },
  };
}

export function renderAfricasTalking(screen: UssdScreen) {
  return { status: 200, contentType: 'text/plain; charset=utf-8', body: `${screen.type} ${screen.text}` };
}

export const africasTalking: UssdGateway = {
  name: 'africastalking',
  parse: parseAfricasTalking,
  render: renderAfricasTalking,
};
