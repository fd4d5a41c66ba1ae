import { type EndpointOptions, exchangeJson, type JsonEndpoint, jsonEndpoint } from '../http-exchange.ts';

// The SMS gateway, used for one thing only: sign-in and PIN-change OTPs. The real client speaks the
// common Nigerian gateway shape (Termii's `POST /api/sms/send`); in the sandbox the same client
// talks to the simulator under /__sandbox/sms-gateway.

export type SmsSender = {
  send(toE164: string, text: string): Promise<void>;
};

export class SmsDeliveryError extends Error {
  override name = 'SmsDeliveryError';
}

export type SmsGatewayOptions = EndpointOptions & {
  apiKey: string;
  senderId: string;
};

/** What every call to the gateway needs, made once by createHttpSmsGateway. */
type SmsGatewayConnection = {
  /** The base URL; the key travels in each body, not in a header. */
  endpoint: JsonEndpoint;
  apiKey: string;
  senderId: string;
};

export function createHttpSmsGateway(options: SmsGatewayOptions): SmsSender {
  const connection: SmsGatewayConnection = {
    endpoint: jsonEndpoint('sms', options, {}),
    apiKey: options.apiKey,
    senderId: options.senderId,
  };
  return { send: (toE164, text) => sendSms(connection, toE164, text) };
}

/** Sent once: a repeated send is a second SMS (the OTP request is the caller's to repeat). */
async function sendSms(connection: SmsGatewayConnection, toE164: string, text: string): Promise<void> {
  const reply = await exchangeJson(connection.endpoint, {
    operation: 'send sms',
    method: 'POST',
    path: '/api/sms/send',
    body: {
      json: {
        api_key: connection.apiKey,
        to: toE164.replace(/^\+/, ''),
        from: connection.senderId,
        sms: text,
        type: 'plain',
        channel: 'dnd',
      },
    },
    retry: false,
  });
  if (reply.kind === 'no_answer') throw new SmsDeliveryError(`SMS gateway ${reply.reason}`);
  if (reply.status < 200 || reply.status >= 300) {
    throw new SmsDeliveryError(`SMS gateway answered ${reply.status}`);
  }
  // The gateway answers {message_id, message, balance}; anything without an id was not accepted.
  const body = reply.body as { message_id?: unknown } | null;
  if (
    typeof body !== 'object' ||
    body === null ||
    (typeof body.message_id !== 'string' && typeof body.message_id !== 'number')
  ) {
    throw new SmsDeliveryError('SMS gateway did not accept the message');
  }
}
