import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { mobileNetworkCodes } from '../shared/networks.ts';
import { toE164 } from '../shared/phone-number.ts';
import { networkOfPhone } from '../shared/prefixes.ts';
import { registerUssdPhonePage } from './ussd-phone-page.ts';

// The USSD gateway (Africa's Talking's wire format, API.md 17.6) and the feature phone behind it.
// POST /__sandbox/ussd {phone, sessionId, text} is one step of a session as the gateway makes it:
// the form it POSTs to the service's callback (application/x-www-form-urlencoded: sessionId,
// serviceCode, phoneNumber in E.164, networkCode from the number's prefix, text = every input so far
// joined by '*'), its patience for the answer, and what it makes of it, `{type: "CON" | "END",
// screen}`. Like the gateway, it holds no session of its own: whoever dials keeps the inputs and
// sends them all again on each step. GET /__sandbox/ussd is a feature phone in a page that does so.
//
// What the real gateway shows a person as "Connection problem or invalid MMI code" (the callback
// missing, refusing, too slow, or answering neither CON nor END) comes back here as 502
// UPSTREAM_UNAVAILABLE with that phrase and the reason, so that a script sees why.

export type SandboxUssdOptions = {
  /** The service's callback, its secret token included; undefined: the sandbox was not told it. */
  callbackUrl: string | undefined;
  /** The code people dial (USSD_SERVICE_CODE), sent as the gateway sends it in `serviceCode`. */
  serviceCode: string;
};

/** How long the gateway waits for the service's answer before it gives the session up (about 15 s). */
export const gatewayPatienceMs = 15_000;
/** The longest `text` a session carries: every input of a long session, well within a USSD string. */
const textLengthMax = 182;
/** The longest answer read from the callback: a screen is 182 characters at most, with room to spare. */
const answerBytesMax = 4_096;
/** What the real gateway shows for any of the failures above. */
export const connectionProblem = 'Connection problem or invalid MMI code';

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const stepBody = z
  .object({
    phone: z.string().max(20),
    // The gateway's own ids look like ATUid_<hex>; any such token of letters, digits and _.:- is taken.
    sessionId: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9_.:-]+$/),
    // What a feature phone's keypad can type: digits, '*' and '#'.
    text: z
      .string()
      .max(textLengthMax)
      .regex(/^[0-9*#]*$/),
  })
  .strict();

export type UssdScreen = { type: 'CON' | 'END'; screen: string };

export function registerSandboxUssd(app: FastifyInstance, options: SandboxUssdOptions): void {
  app.post('/__sandbox/ussd', routeOptions, async (request, reply) => {
    const body = stepBody.safeParse(request.body);
    if (!body.success) {
      return refuse(
        reply,
        400,
        'VALIDATION_ERROR',
        `phone, sessionId (letters, digits, _.:-) and text (keypad characters 0-9 * #, ${textLengthMax} at most) are required`,
      );
    }
    const phoneNumber = toE164(body.data.phone);
    const network = phoneNumber === null ? null : networkOfPhone(phoneNumber);
    if (phoneNumber === null || network === null) {
      return refuse(
        reply,
        400,
        'VALIDATION_ERROR',
        'phone must be a Nigerian mobile number, such as 08031234567',
      );
    }
    if (network === 'other') {
      return refuse(
        reply,
        400,
        'VALIDATION_ERROR',
        'the gateway reaches MTN, Airtel, Glo and 9mobile numbers only: this number belongs to none of them',
      );
    }
    if (options.callbackUrl === undefined) {
      return refuse(
        reply,
        502,
        'UPSTREAM_UNAVAILABLE',
        `${connectionProblem}: this sandbox does not know the service's USSD callback; start it with USSD_CALLBACK_TOKEN set to the service's`,
      );
    }
    const answer = await relay(options.callbackUrl, {
      sessionId: body.data.sessionId,
      serviceCode: options.serviceCode,
      phoneNumber,
      networkCode: mobileNetworkCodes[network],
      text: body.data.text,
    });
    if ('problem' in answer) {
      return refuse(reply, 502, 'UPSTREAM_UNAVAILABLE', `${connectionProblem}: ${answer.problem}`);
    }
    return { success: true, data: answer };
  });
  registerUssdPhonePage(app, { serviceCode: options.serviceCode });
}

/** The form the gateway posts, field by field, in the order Africa's Talking documents them. */
type GatewayForm = {
  sessionId: string;
  serviceCode: string;
  phoneNumber: string;
  networkCode: string;
  text: string;
};

/** One callback: the screen it answered, or why the gateway would show a connection problem. */
async function relay(callbackUrl: string, form: GatewayForm): Promise<UssdScreen | { problem: string }> {
  let status: number;
  let bytes: ArrayBuffer;
  try {
    const response = await fetch(callbackUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/plain' },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
      // The patience covers the whole answer, its body too, as the gateway's does.
      signal: AbortSignal.timeout(gatewayPatienceMs),
    });
    status = response.status;
    bytes = await response.arrayBuffer();
  } catch (error) {
    return { problem: unreachable(error) };
  }
  if (status !== 200) {
    return {
      problem:
        status === 404
          ? "the service's callback answered 404 (no such callback: is USSD_CALLBACK_TOKEN the service's?)"
          : `the service's callback answered HTTP ${status}`,
    };
  }
  if (bytes.byteLength > answerBytesMax) {
    return { problem: `the service's answer was longer than ${answerBytesMax} bytes` };
  }
  const answer = new TextDecoder().decode(bytes);
  const screen = /^(CON|END)(?: ([\s\S]*))?$/.exec(answer);
  if (screen === null) {
    return {
      problem: `the service answered neither "CON ..." nor "END ...": ${JSON.stringify(answer.slice(0, 60))}`,
    };
  }
  return { type: screen[1] as UssdScreen['type'], screen: screen[2] ?? '' };
}

function unreachable(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return `the service did not answer within ${gatewayPatienceMs / 1000} s`;
  }
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `the service's callback could not be reached${cause}`;
}

function refuse(reply: FastifyReply, status: number, code: string, message: string) {
  return reply.code(status).send({ success: false, error: { code, message } });
}
