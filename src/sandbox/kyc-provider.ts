import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sameSecret } from './secrets.ts';
import { SANDBOX_KYC_APP_ID, SANDBOX_KYC_SECRET, type SandboxState } from './state.ts';

// The sandbox KYC provider, under /__sandbox/kyc: Dojah's wire shapes (headers `AppId` and
// `Authorization: <secret>`, answers `{entity: {...}}`, 404 `{error}` for no such record), with the
// magic values of shared/API.md section 8. The sandbox liveness page (liveness-page.ts) plays the
// provider's browser widget: it asks POST /__sandbox/kyc/liveness/sessions for a token.

const prefix = '/__sandbox/kyc';
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

/** Issued page tokens not yet verified are kept up to this many; the oldest go first. */
const livenessTokensMax = 10_000;

/** Someone other than the caller: NINs and account numbers starting with 9 resolve to this person. */
const otherPerson = { firstName: 'MUSA', middleName: 'IBRAHIM', lastName: 'DANJUMA' } as const;
const notFoundNin = '00000000000';
/**
 * The phone on the record of NINs starting with 8: not the caller's (the verify request carries no
 * phone, so the other NINs' records carry none and leave the phone given unchecked).
 */
const otherPersonPhone = '07000000008';

const passed = { liveness_check: true, liveness_probability: 98.2, message: 'Live face detected' };
const failed = { liveness_check: false, liveness_probability: 12.4, message: 'No live face detected' };

const name = z.string().trim().min(1).max(100);
const ninRequest = z.object({ nin: z.string().regex(/^\d{11}$/), first_name: name, last_name: name });
const nubanRequest = z.object({
  account_number: z.string().regex(/^\d{10}$/),
  bank_code: z.string().regex(/^\d{3,6}$/),
  first_name: name,
  last_name: name,
});
const livenessSessionRequest = z.object({ outcome: z.enum(['pass', 'fail']) });

export function registerSandboxKyc(app: FastifyInstance, state: SandboxState): void {
  app.get(`${prefix}/api/v1/kyc/liveness/verify`, routeOptions, async (request, reply) =>
    authorised(request) ? verifyLiveness(state, request, reply) : refuse(reply),
  );
  app.post(`${prefix}/api/v1/kyc/nin/verify`, routeOptions, async (request, reply) =>
    authorised(request) ? verifyNin(request, reply) : refuse(reply),
  );
  app.post(`${prefix}/api/v1/kyc/nuban/verify`, routeOptions, async (request, reply) =>
    authorised(request) ? verifyNuban(request, reply) : refuse(reply),
  );
  // The widget's side: the liveness page asks for a token that will verify as passed or failed.
  // Like a provider's widget it needs no secret (it runs in the user's browser).
  app.post(`${prefix}/liveness/sessions`, routeOptions, async (request, reply) =>
    startLivenessSession(state, request, reply),
  );
}

function verifyLiveness(state: SandboxState, request: FastifyRequest, reply: FastifyReply) {
  const token = (request.query as { reference_id?: unknown }).reference_id;
  if (typeof token !== 'string' || token === '') {
    return reply.code(400).send({ error: 'reference_id is required' });
  }
  let outcome: 'pass' | 'fail' | undefined;
  if (token === 'sandbox-pass') outcome = 'pass';
  else if (token === 'sandbox-fail') outcome = 'fail';
  else {
    // A token from the liveness page is good for one verification, as a provider's session is.
    outcome = state.livenessTokens.get(token);
    state.livenessTokens.delete(token);
  }
  if (outcome === undefined) return reply.code(404).send({ error: 'Liveness reference not found' });
  return { entity: { reference_id: token, ...(outcome === 'pass' ? passed : failed) } };
}

function verifyNin(request: FastifyRequest, reply: FastifyReply) {
  const body = ninRequest.safeParse(request.body);
  if (!body.success)
    return reply.code(400).send({ error: 'nin (11 digits), first_name and last_name are required' });
  const { nin, first_name, last_name } = body.data;
  if (nin === notFoundNin) return reply.code(404).send({ error: 'NIN not found' });
  const person = nin.startsWith('9')
    ? {
        first_name: otherPerson.firstName,
        middle_name: otherPerson.middleName,
        last_name: otherPerson.lastName,
      }
    : { first_name, middle_name: null, last_name };
  return { entity: { nin, ...person, phone_number: nin.startsWith('8') ? otherPersonPhone : null } };
}

function verifyNuban(request: FastifyRequest, reply: FastifyReply) {
  const body = nubanRequest.safeParse(request.body);
  if (!body.success) {
    return reply
      .code(400)
      .send({ error: 'account_number (10 digits), bank_code, first_name and last_name are required' });
  }
  const { account_number, bank_code, first_name, last_name } = body.data;
  // Banks hold the surname first, in capitals.
  const accountName = account_number.startsWith('9')
    ? `${otherPerson.lastName} ${otherPerson.firstName} ${otherPerson.middleName}`
    : `${last_name} ${first_name}`.toUpperCase();
  return { entity: { account_number, bank_code, account_name: accountName } };
}

function startLivenessSession(state: SandboxState, request: FastifyRequest, reply: FastifyReply) {
  const body = livenessSessionRequest.safeParse(request.body);
  if (!body.success) return reply.code(400).send({ error: 'outcome must be "pass" or "fail"' });
  const token = `liv_${randomBytes(16).toString('hex')}`;
  state.livenessTokens.set(token, body.data.outcome);
  for (const oldest of state.livenessTokens.keys()) {
    if (state.livenessTokens.size <= livenessTokensMax) break;
    state.livenessTokens.delete(oldest);
  }
  return { token };
}

function authorised(request: FastifyRequest): boolean {
  return (
    sameSecret(request.headers.appid, SANDBOX_KYC_APP_ID) &&
    sameSecret(request.headers.authorization, SANDBOX_KYC_SECRET)
  );
}

function refuse(reply: FastifyReply) {
  return reply.code(401).send({ error: 'Invalid AppId or Authorization secret' });
}
