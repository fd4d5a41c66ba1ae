// The SMS gateway, used for one thing only: sign-in and PIN-change OTPs. The real client speaks the
// common Nigerian gateway shape (Termii's `POST /api/sms/send`); in the sandbox the same client
// talks to the simulator under /__sandbox/sms-gateway.

export type SmsSender = {
  send(toE164: string, text: string): Promise<void>;
};

export class SmsDeliveryError extends Error {
  override name = 'SmsDeliveryError';
}

export type SmsGatewayOptions = {
  baseUrl: () => string;
  apiKey: string;
  senderId: string;
  timeoutMs: number;
};

export function createHttpSmsGateway(options: SmsGatewayOptions): SmsSender {
  return {
    async send(toE164, text) {
      let response: Response;
      try {
        response = await fetch(`${options.baseUrl()}/api/sms/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            api_key: options.apiKey,
            to: toE164.replace(/^\+/, ''),
            from: options.senderId,
            sms: text,
            type: 'plain',
            channel: 'dnd',
          }),
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        throw new SmsDeliveryError(`SMS gateway unreachable: ${(error as Error).message}`, { cause: error });
      }
      if (!response.ok) {
        throw new SmsDeliveryError(`SMS gateway answered ${response.status}`);
      }
      // The gateway answers {message_id, message, balance}; anything without an id was not accepted.
      const body = (await response.json().catch(() => null)) as { message_id?: unknown } | null;
      if (body === null || (typeof body.message_id !== 'string' && typeof body.message_id !== 'number')) {
        throw new SmsDeliveryError('SMS gateway did not accept the message');
      }
    },
  };
}
