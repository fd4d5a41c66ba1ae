import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { errorCodes } from '../../src/errors.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { statusOf } from '../../src/http/errors.ts';
import { basisPointsToPercent, koboToNaira } from '../../src/money.ts';
import { assertLedgerOk, sendWebhook, walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  arbitraryOf,
  containsNul,
  type Documented,
  documentedOperations,
  type Hostile,
  hostileVariant,
} from '../helpers/schema-arbitrary.ts';
import { createWorld, type SignedIn, sendRaw, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { buyer, PIN } from '../vtu/purchase-support.ts';

// Generated inputs for every operation that /openapi.json documents, and signed webhook bodies:
// valid ones and hostile variants (a NUL in a string, a hostile value anywhere, an unknown field,
// `__proto__` and `constructor.prototype` keys). Whatever is sent, the answer is the contract's
// (the envelope, a known code at its own status, never a 5xx), hostile input is refused with the
// code the contract gives it, and no refused request moves money. FUZZ_RUNS sets the inputs per
// operation (default 20); fast-check prints the seed and the smallest failing input.

const runsPerOperation = Number(process.env.FUZZ_RUNS ?? 20);

type Answer = { status: number; body: unknown; text: string };

async function send(
  world: World,
  op: Documented,
  input: unknown,
  token: string | undefined,
): Promise<Answer> {
  const response = await sendRaw(world, op.method, op.name, input, token);
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}

type ErrorShape = { code: string; message: string };

/** The contract's rules for any answer to any input; throws (for fast-check to shrink) on a breach. */
function judge(op: Documented, sent: Hostile, answer: Answer, markupMax: { flat: number; percent: number }) {
  const label = `${op.method} ${op.name} ${JSON.stringify(sent.value)?.slice(0, 300)} → ${answer.status} ${answer.text.slice(0, 300)}`;
  const envelope = answer.body as { success?: unknown; data?: unknown; error?: ErrorShape } | undefined;
  assert.ok(envelope !== undefined && typeof envelope.success === 'boolean', `not the envelope: ${label}`);
  if (envelope.success === true) {
    assert.equal(answer.status, 200, label);
  } else {
    const code = envelope.error?.code as (typeof errorCodes)[number];
    assert.ok(errorCodes.includes(code), `unknown code: ${label}`);
    assert.equal(answer.status, statusOf(code), `a code at another status: ${label}`);
    assert.ok(code !== 'INTERNAL', `a 500: ${label}`);
    assert.ok(
      code !== 'UPSTREAM_UNAVAILABLE' || op.name.startsWith('verify'),
      `502 outside a look-up: ${label}`,
    );
  }
  // Authentication and the role are decided before the body is read; everything after is validation.
  const beforeValidation = answer.status === 401 || answer.status === 403;
  if (sent.nul && !beforeValidation) {
    assert.equal(answer.status, 400, `a NUL character not refused: ${label}`);
    assert.equal(envelope.error?.code, 'VALIDATION_ERROR', label);
  }
  if (sent.prototypeKey !== null && op.method === 'POST' && !beforeValidation) {
    assert.equal(answer.status, 400, `a ${sent.prototypeKey} key not refused: ${label}`);
    assert.ok(
      envelope.error?.message.includes(sent.prototypeKey),
      `the refusal does not name the key: ${label}`,
    );
  }
  if (op.name === 'adminSetMarkup' && envelope.success === true) {
    const markup = envelope.data as { flat: number; percent: number };
    assert.ok(markup.flat <= markupMax.flat, `flat markup above the maximum accepted: ${label}`);
    assert.ok(markup.percent <= markupMax.percent, `percent markup above the maximum accepted: ${label}`);
  }
}

describe(`fuzz: every documented operation and the webhook (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  let user: SignedIn;
  let operations: Documented[];

  before(async () => {
    const adminPhone = uniquePhone();
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
    // Tier 1, a PIN and money: the purchase paths get as far as their own rules, with a PIN the
    // generated inputs never hold (so nothing valid can buy).
    user = await buyer(world, 5_000);
    const document = (await (await fetch(`${world.baseUrl}/openapi.json`)).json()) as Parameters<
      typeof documentedOperations
    >[0];
    operations = documentedOperations(document);
  });
  after(() => world?.close());

  it('documents the operations it fuzzes', () => {
    assert.ok(operations.length >= 45, `only ${operations.length} operations`);
    for (const name of ['buyAirtime', 'adminSetMarkup', 'verifyOtp', 'listMyVtuTransactions']) {
      assert.ok(
        operations.some((op) => op.name === name),
        name,
      );
    }
  });

  it('answers every generated input in the contract, refuses hostile ones, and moves no money', async () => {
    const walletBefore = await walletKobo(world, user.userId);
    const markupMax = {
      flat: koboToNaira(world.ctx.config.vtu.markupMax.flatKobo),
      percent: basisPointsToPercent(world.ctx.config.vtu.markupMax.percentBp),
    };
    for (const op of operations) {
      const valid = arbitraryOf(op.input);
      const inputs = fc
        .oneof(
          valid.map((value): Hostile => ({ value, nul: containsNul(value), prototypeKey: null })),
          hostileVariant(valid),
        )
        // The buyer's own PIN would make a valid purchase; everything else about it is fuzzed.
        .filter((sent) => !JSON.stringify(sent.value ?? null).includes(PIN))
        // A valid signOut would end the session the rest of the run uses, and so would ending
        // everyone's sessions (adminRevokeSessions {all: true} spares only the admin's).
        .filter((sent) => op.name !== 'signOut' || JSON.stringify(sent.value) !== '{}')
        .filter((sent) => op.name !== 'adminRevokeSessions' || JSON.stringify(sent.value) !== '{"all":true}');
      const token =
        op.auth === 'public' ? undefined : op.auth === 'admin' ? admin.accessToken : user.accessToken;
      await fc.assert(
        fc.asyncProperty(inputs, async (sent) =>
          judge(op, sent, await send(world, op, sent.value, token), markupMax),
        ),
        { numRuns: runsPerOperation },
      );
    }
    assert.equal(await walletKobo(world, user.userId), walletBefore, 'a refused request moved money');
    const purchases = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(purchases.n), 0, 'a fuzzed purchase was accepted');
    await assertLedgerOk(world);
  });

  it('answers every signed webhook body 200, leaves none unprocessed, and moves no money', async () => {
    const walletBefore = await walletKobo(world, user.userId);
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ maxLength: 20 }).map((s) => `${s}\u0000${s}`),
    );
    const event = fc.oneof(
      fc.constantFrom(
        'charge.success',
        'transfer.success',
        'transfer.failed',
        'transfer.reversed',
        'dedicatedaccount.assign.success',
        'charge.dispute.create',
      ),
      text,
      fc.jsonValue({ maxDepth: 1 }),
    );
    const data = fc.record(
      {
        reference: fc.oneof(text, fc.uuid(), fc.integer(), fc.constant(null)),
        amount: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.constant(1e308)),
        currency: fc.oneof(fc.constant('NGN'), text),
        status: fc.oneof(fc.constantFrom('success', 'failed', 'reversed', 'abandoned'), text),
        channel: fc.oneof(fc.constantFrom('card', 'dedicated_nuban', 'bank_transfer'), text),
        customer: fc.oneof(
          fc.record({ email: text, customer_code: text }, { requiredKeys: [] }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        authorization: fc.jsonValue({ maxDepth: 2 }),
        metadata: fc.jsonValue({ maxDepth: 2 }),
        gateway_response: text,
        paid_at: fc.oneof(
          text,
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.record({ event, data }, { requiredKeys: [] }),
      fc.record({ event, data: fc.jsonValue({ maxDepth: 3 }) }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const raw = JSON.stringify(value) ?? 'null';
        const answer = await sendWebhook(world, raw);
        assert.equal(
          answer.status,
          200,
          `${raw.slice(0, 300)} → ${answer.status} ${answer.text.slice(0, 200)}`,
        );
      }),
      { numRuns: runsPerOperation * 10 },
    );
    // Everything stored is processed, or closed as unusable: nothing is left for the sweep to retry
    // forever.
    await world.ctx.modules.funding.api.paymentEvents.drainNow();
    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
    const open = await world.ctx.db
      .selectFrom('payment_events')
      .select(['event', 'reference', 'body'])
      .where('processed_at', 'is', null)
      .execute();
    assert.deepEqual(open, [], 'signed events left unprocessed');
    assert.equal(await walletKobo(world, user.userId), walletBefore);
    await assertLedgerOk(world);
  });

  it('answers any size of headers or query: within the limit as usual, over it 431 and a usable client', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
        const request = http.get(
          new URL(path, world.baseUrl),
          { agent, headers: { authorization: `Bearer ${user.accessToken}`, ...headers } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              text += chunk;
            });
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, text }),
            );
          },
        );
        request.on('error', reject);
      });
    try {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 48_000 }), fc.boolean(), async (size, inQuery) => {
          const answer = inQuery
            ? await ask(`/_serverFn/getWallet?${'x'.repeat(size)}=1`, {})
            : await ask('/_serverFn/getWallet', { 'x-padding': 'y'.repeat(size) });
          const label = `${inQuery ? 'query' : 'header'} of ${size} → ${answer.status} ${answer.text.slice(0, 120)}`;
          assert.ok([200, 400, 431].includes(answer.status), label);
          const envelope = JSON.parse(answer.text) as { success: boolean; error?: ErrorShape };
          if (answer.status === 431) {
            assert.equal(envelope.error?.code, 'PAYLOAD_TOO_LARGE', label);
            assert.equal(answer.connection, 'close', label);
          }
          assert.equal((await ask('/_serverFn/getWallet', {})).status, 200, `the request after: ${label}`);
        }),
        { numRuns: runsPerOperation },
      );
    } finally {
      agent.destroy();
    }
  });
});
