import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.ts';

// Signing in is anonymous, so the app's limit counts it per address, and one carrier address
// (CGNAT) carries many people: that limit is sized for a carrier (RATE_LIMIT_ANONYMOUS_PER_MINUTE).
// Each sign-in operation is also counted per phone (RATE_LIMIT_PHONE_PER_MINUTE), so one who
// guesses codes or pumps SMS to one number from many addresses is stopped at that number.
// Decision 0029 gives the arithmetic.
//
// The count is the rate-limit plugin's own (createRateLimit), over the app's store: in Redis across
// the processes when REDIS_URL is set, in this process otherwise or while Redis is out of reach.
// It runs as a preHandler, after the per-address limit and after validation: the phone it counts is
// the input's E.164 one (0803... and +234803... are one number), and input that is no phone is a
// 400 VALIDATION_ERROR before it, never a count of its own.

const WINDOW_MS = 60_000;

/** A preHandler that counts the operation's requests per phone and refuses those past the limit. */
export type PhoneRateLimit = (
  operation: string,
  phoneOf: (request: FastifyRequest) => string,
) => preHandlerAsyncHookHandler;

/** Per-phone limits over the app's rate-limit plugin (registered before), `perMinute` each. */
export function phoneRateLimit(app: FastifyInstance, perMinute: number): PhoneRateLimit {
  return (operation, phoneOf) => {
    // One count per operation: asking for a code and typing it are limited apart, so a person who
    // mistypes a code a few times can still ask for a new one.
    const check = app.createRateLimit({
      max: perMinute,
      timeWindow: WINDOW_MS,
      keyGenerator: (request) => `phone:${operation}:${phoneOf(request)}`,
    });
    return async (request) => {
      const limit = await check(request);
      if (limit.isAllowed || !limit.isExceeded) return;
      // No details.retryAfterSeconds: the web client reads that on requestOtp as "a code was sent a
      // moment ago" (the 60 s resend window); this refusal is the generic one, with Retry-After.
      throw new AppError('RATE_LIMITED', 'too many sign-in requests for this phone; wait a minute', {
        retryAfterSeconds: Math.max(1, limit.ttlInSeconds),
      });
    };
  };
}
