import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IpAllowList } from '../config.ts';
import type { UssdGateway, UssdRequest, UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { sameDigest, sha256Hex } from '../shared/keyed-hash.ts';

// POST /api/public/ussd/<USSD_CALLBACK_TOKEN>: a USSD gateway's callback, one per step a person takes
// (API.md 17.6). The gateway signs nothing, so the secret path, the allow-list of its addresses and
// the caller's number bound to a registered user are what the service has: a wrong token, a caller
// outside USSD_ALLOWED_IPS, or the channel off (no token) is the service's ordinary 404, the same as
// for a path that does not exist. Everything else is answered in the gateway's own format, a screen,
// never an error envelope: the gateway shows a person whatever it gets. The form parser is registered
// in this route's own plugin, so nothing else the service serves accepts forms.
//
// `text` repeats every input, the PIN among them: it is never logged (one line per step says how many
// inputs there were), and the token in the URL is taken out of every log line (log-redaction.ts).

export const ussdCallbackPrefix = '/api/public/ussd/';

export type UssdCallbackDeps = {
  /** USSD_CALLBACK_TOKEN; undefined: the channel is off and the route is not served. */
  callbackToken: string | undefined;
  /** USSD_ALLOWED_IPS; undefined: any address. */
  allowedIps: IpAllowList | undefined;
  /**
   * Steps one phone may send a minute (RATE_LIMIT_PER_MINUTE, a signed-in person's): a person types a
   * few a minute, a loop or a guesser is stopped, and the gateway's shared address limits nobody.
   */
  stepsPerPhonePerMinute: number;
  gateway: UssdGateway;
  /** Answers a step (the ussd module's api). */
  answer(gateway: string, request: UssdRequest): Promise<{ screen: UssdScreen; replayed: boolean }>;
};

const apology: UssdScreen = { type: 'END', text: 'Sorry, we could not read that. Please dial again.' };
const failed: UssdScreen = { type: 'END', text: 'Sorry, something went wrong. Please dial again shortly.' };
const tooMany: UssdScreen = {
  type: 'END',
  text: 'Too many requests from this phone. Please wait a minute and dial again.',
};

export function registerUssdCallbackRoute(app: FastifyInstance, deps: UssdCallbackDeps): void {
  const token = deps.callbackToken;
  if (token === undefined) return;
  const tokenDigest = sha256Hex(token);
  // Compared as digests of equal length, in constant time: the token's length is not told either.
  const admitted = (request: FastifyRequest): boolean => {
    const given = (request.params as { token?: unknown }).token;
    if (typeof given !== 'string' || !sameDigest(sha256Hex(given), tokenDigest)) return false;
    return deps.allowedIps === undefined || deps.allowedIps.allows(request.ip);
  };
  const send = (reply: FastifyReply, screen: UssdScreen) => {
    const answer = deps.gateway.render(screen);
    return reply.code(answer.status).type(answer.contentType).send(answer.body);
  };

  void app.register(async (scope) => {
    await scope.register(formbody);
    const perPhone = scope.createRateLimit({
      max: deps.stepsPerPhonePerMinute,
      timeWindow: 60_000,
      keyGenerator: (request) => `ussd:${phoneField(request.body)}`,
    });
    // A body that cannot be parsed (not a form, too large): an apology the gateway can show, once
    // the caller is known to be the gateway; anyone else meets the 404 of a path that is not there.
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      if (!admitted(request)) return reply.callNotFound();
      request.log.info(
        { ussd: { gateway: deps.gateway.name, refused: error.code ?? error.name } },
        'ussd step unreadable',
      );
      return send(reply, apology);
    });
    scope.post(
      `${ussdCallbackPrefix}:token`,
      // The per-address limit would count every person behind the gateway's few addresses as one:
      // steps are limited per phone below instead.
      { schema: { hide: true }, config: { rateLimit: false } },
      async (request, reply) => {
        if (!admitted(request)) return reply.callNotFound();
        const parsed = deps.gateway.parse(request.body);
        if (!parsed.ok) {
          request.log.info(
            { ussd: { gateway: deps.gateway.name, unreadable: parsed.reason } },
            'ussd step unreadable',
          );
          return send(reply, apology);
        }
        const step = parsed.request;
        const limit = await perPhone(request);
        if (!limit.isAllowed && limit.isExceeded) return send(reply, tooMany);
        const logged = {
          gateway: deps.gateway.name,
          sessionId: step.sessionId,
          serviceCode: step.serviceCode,
          networkCode: step.networkCode,
          inputs: step.inputs.length,
        };
        try {
          const { screen, replayed } = await deps.answer(deps.gateway.name, step);
          request.log.info({ ussd: { ...logged, answer: screen.type, replayed } }, 'ussd step');
          return send(reply, screen);
        } catch (error) {
          request.log.error({ err: error, ussd: logged }, 'ussd step failed');
          return send(reply, failed);
        }
      },
    );
  });
}

const phoneField = (body: unknown): string => {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>).phoneNumber : undefined;
  return typeof value === 'string' ? value.slice(0, 20) : 'none';
};
