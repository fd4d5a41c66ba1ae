import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { sandboxAirtimeCashPath } from './vtu/airtime-cash.ts';
import { sandboxSocialPath } from './vtu/social.ts';

// Faults a tester (or the soak run) sets on a simulated provider's API, hidden like every sandbox
// control:
//
//   POST /__sandbox/providers/<data|bills|social|airtime-cash|payments>/faults
//        {"mode": "normal" | "timeout" | "error", "count"?: n}
//     → 200 {"success": true, "data": {"mode": ..., "remaining": n | null, "met": [...], "held": n}}
//     (`met`: the requests the provider's last fault met, "METHOD /path", the latest 100, so that a
//     tester knows the call they meant was hit; `held`: requests timeout faults hold now, of every
//     provider)
//   GET  the same path → the fault in force.
//
// While a fault is set, every request to that provider's API (not its sandbox controls, such as
// /__sandbox/providers/<name>/balance) is met by it: "error" answers 503; "timeout" holds the
// request without answering, until the client gives up and closes it (or the sandbox stops, which
// releases it with a 503). `count` limits the fault to that many requests, after which the provider
// is normal again; without it the fault lasts until "normal" is set. A bad body is a 400.

export const faultyProviders = ['data', 'bills', 'social', 'airtime-cash', 'payments'] as const;
export type FaultyProvider = (typeof faultyProviders)[number];

type Fault = { mode: 'timeout' | 'error'; remaining: number | undefined };

/** The faults in force, by provider, and the requests a timeout fault holds. */
export type SandboxFaultsState = {
  faults: Map<FaultyProvider, Fault>;
  /** The requests each provider's last fault met (set anew with each fault). */
  met: Map<FaultyProvider, string[]>;
  held: Set<FastifyReply>;
};

export function createSandboxFaultsState(): SandboxFaultsState {
  return { faults: new Map(), met: new Map(), held: new Set() };
}

/** Requests kept per provider in `met`; the oldest go first. */
const metKeptMax = 100;

/** Where each provider's API is mounted (the paths its adapter calls). */
const apiPrefixes: Record<FaultyProvider, string> = {
  data: '/__sandbox/vtu/data/',
  bills: '/__sandbox/vtu/bills/',
  social: `${sandboxSocialPath}/`,
  'airtime-cash': `${sandboxAirtimeCashPath}/`,
  payments: '/__sandbox/payments/',
};

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const faultBody = z
  .object({
    mode: z.enum(['normal', 'timeout', 'error']),
    count: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();

export function registerSandboxFaults(app: FastifyInstance, state: SandboxFaultsState): void {
  for (const provider of faultyProviders) {
    const path = `/__sandbox/providers/${provider}/faults`;
    app.get(path, routeOptions, async () => faultAnswer(state, provider));
    app.post(path, routeOptions, async (request, reply) => setFault(state, provider, request, reply));
  }
  app.addHook('onRequest', async (request, reply) => meetFault(state, request, reply));
  // A held request would keep the server from closing: the sandbox's stop releases them.
  app.addHook('preClose', async () => {
    for (const reply of state.held) releaseHeld(state, reply);
  });
}

function setFault(
  state: SandboxFaultsState,
  provider: FaultyProvider,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const body = faultBody.safeParse(request.body);
  if (!body.success) {
    return reply.code(400).send({
      success: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'mode: "normal", "timeout" or "error"; count: a whole number ≥ 1, optional',
      },
    });
  }
  const { mode, count } = body.data;
  if (mode === 'normal') state.faults.delete(provider);
  else {
    state.faults.set(provider, { mode, remaining: count });
    state.met.set(provider, []);
  }
  return faultAnswer(state, provider);
}

function faultAnswer(state: SandboxFaultsState, provider: FaultyProvider) {
  const fault = state.faults.get(provider);
  return {
    success: true,
    data: {
      mode: fault?.mode ?? 'normal',
      remaining: fault?.remaining ?? null,
      met: state.met.get(provider) ?? [],
      held: state.held.size,
    },
  };
}

/** The fault of the provider whose API the request is for, counted; undefined: none in force. */
function takeFault(state: SandboxFaultsState, method: string, url: string): Fault['mode'] | undefined {
  // Every request of an in-process sandbox's service passes here: the service's own leave at once.
  if (state.faults.size === 0 || !url.startsWith('/__sandbox/')) return undefined;
  const provider = faultyProviders.find((name) => url.startsWith(apiPrefixes[name]));
  if (provider === undefined) return undefined;
  const fault = state.faults.get(provider);
  if (fault === undefined) return undefined;
  const met = state.met.get(provider) ?? [];
  met.push(`${method} ${url.split('?')[0]}`);
  if (met.length > metKeptMax) met.splice(0, met.length - metKeptMax);
  state.met.set(provider, met);
  if (fault.remaining !== undefined) {
    fault.remaining -= 1;
    if (fault.remaining <= 0) state.faults.delete(provider);
  }
  return fault.mode;
}

async function meetFault(state: SandboxFaultsState, request: FastifyRequest, reply: FastifyReply) {
  const mode = takeFault(state, request.method, request.url);
  if (mode === undefined) return;
  if (mode === 'error') {
    return reply.code(503).send({ status: false, message: 'sandbox fault: service unavailable' });
  }
  // "timeout": no answer. The request stays open until the client closes it or the sandbox stops.
  state.held.add(reply);
  request.raw.socket.once('close', () => releaseHeld(state, reply));
  return reply;
}

function releaseHeld(state: SandboxFaultsState, reply: FastifyReply): void {
  if (!state.held.delete(reply)) return;
  if (!reply.sent && !reply.raw.destroyed) {
    void reply.code(503).send({ status: false, message: 'sandbox fault: released' });
  }
}
