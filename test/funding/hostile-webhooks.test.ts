import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { floatTopUpByReference, startFloatTopUp } from '../../src/funding/float-top-ups.ts';
import { newId } from '../../src/ids.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { sandboxPayments } from '../payments/helpers.ts';
import {
  assertLedgerOk,
  BOUNDED,
  createIntent,
  fundingDeps,
  type Intent,
  intentRow,
  processed,
  sendWebhook,
  sha256,
  storedEvent,
  walletKobo,
} from './support.ts';

// Bodies that are validly signed and still hostile (issue 15 item 6): whoever holds the secret, or a
// provider bug, can send any JSON. Each is stored, answered 200 and closed, never a 500 (which the
// provider would retry forever) and never an event the sweep keeps retrying; none moves money. A
// NUL, or half of a surrogate pair, written as a JSON escape (`\u0000`, `\ud800`) passes the byte
// check and parses into a string that PostgreSQL's text refuses (NUL) or its jsonb refuses (both),
// wherever it would land: the event and reference columns, a look-up by customer code, a failure
// reason, an alert's or a job's details.

const AMOUNT_KOBO = 5_000_000;

describe(`hostile but validly signed webhooks (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  let intent: Intent;
  let transferReference: string;
  let account: { accountNumber: string; customerCode: string };

  before(async () => {
    world = await createWorld();
    user = await userAtTier(world, 2);
    intent = await createIntent(world, user, 500);
    const payments = sandboxPayments(world);
    payments.transferSettleDelayMs = 3_600_000;
    payments.balanceKobo = 1_000_000_000n;
    const deps = fundingDeps(world);
    const transfer = await startFloatTopUp(deps, {
      destination: {
        provider: 'bills',
        bankCode: '058',
        accountNumber: '0123456780',
        accountName: 'Bills Ltd',
      },
      amountKobo: BigInt(AMOUNT_KOBO),
      reason: 'float top-up',
    });
    assert.equal(transfer.status, 'pending');
    transferReference = transfer.reference;
    const view = ok(
      await post<{ accountNumber: string }>(
        world,
        'requestDedicatedAccount',
        {},
        { token: user.accessToken },
      ),
    );
    const row = await world.ctx.db
      .selectFrom('dedicated_accounts')
      .select('customer_code')
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    account = { accountNumber: view.accountNumber, customerCode: row.customer_code };
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  let counter = 0;
  const chargeReference = () => `dva-hostile-${process.pid}-${++counter}`;

  const charge = (data: Record<string, unknown>) =>
    JSON.stringify({
      event: 'charge.success',
      data: {
        reference: intent.reference,
        status: 'success',
        currency: 'NGN',
        amount: 50_000,
        channel: 'card',
        customer: { email: 'someone@example.com' },
        ...data,
      },
    });
  const dedicatedCharge = (reference: string, data: Record<string, unknown>) =>
    charge({
      reference,
      channel: 'dedicated_nuban',
      authorization: { receiver_bank_account_number: account.accountNumber },
      customer: { customer_code: account.customerCode },
      ...data,
    });
  const transferFailed = (data: Record<string, unknown>) =>
    JSON.stringify({
      event: 'transfer.failed',
      data: { reference: transferReference, amount: AMOUNT_KOBO, status: 'failed', ...data },
    });

  const ledgerTransactions = async () => {
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from ledger_transactions`.execute(
      world.ctx.db,
    );
    return Number(rows[0]?.n);
  };

  /** Sends a signed body, expects 200 and the event closed with `outcome`, and that no money moved. */
  async function expectClosed(body: string, outcome: string): Promise<void> {
    const before = { wallet: await walletKobo(world, user.userId), postings: await ledgerTransactions() };
    const answer = await sendWebhook(world, body);
    assert.equal(answer.status, 200, body.slice(0, 200));
    const event = await processed(world, body);
    assert.equal(event.outcome, outcome, body.slice(0, 200));
    assert.equal(await walletKobo(world, user.userId), before.wallet, 'no wallet was credited');
    assert.equal(await ledgerTransactions(), before.postings, 'nothing was posted');
    assert.equal((await intentRow(world, intent.reference))?.status, 'pending');
    assert.equal((await floatTopUpByReference(world.ctx, transferReference)).status, 'pending');
  }

  describe('a NUL escaped in the JSON: stored, 200, closed as malformed', () => {
    const cases: Array<[string, () => string]> = [
      ['in the event name', () => charge({}).replace('"charge.success"', '"charge.success\\u0000"')],
      ['in data.reference', () => charge({ reference: `${intent.reference}\u0000` })],
      ['in a field nobody reads (the customer email)', () => charge({ customer: { email: 'a\u0000@b.c' } })],
      ['in a key', () => charge({ '\u0000': 1 })],
      ['in a transfer failure reason', () => transferFailed({ gateway_response: 'bank\u0000down' })],
      ['in the narration of a transfer', () => transferFailed({ reason: 'float\u0000' })],
      [
        'in the customer code a dedicated-account charge is matched by',
        () =>
          dedicatedCharge(chargeReference(), {
            authorization: null,
            customer: { customer_code: `${account.customerCode}\u0000` },
          }),
      ],
      [
        'in the reference of a dedicated-account charge',
        () => dedicatedCharge(`${chargeReference()}\u0000`, {}),
      ],
      [
        'at the bottom of JSON nested 100,000 deep',
        () =>
          charge({ deep: 'placeholder' }).replace(
            '"placeholder"',
            `${'['.repeat(100_000)}"\\u0000"${']'.repeat(100_000)}`,
          ),
      ],
    ];
    for (const [name, make] of cases) {
      it(name, BOUNDED, async () => {
        const body = make();
        assert.ok(body.includes('\\u0000'), 'the body holds the escape, not the byte');
        await expectClosed(body, 'malformed');
        const event = await storedEvent(world, body);
        assert.equal(event?.body, body, 'kept exactly as received');
        assert.equal(event?.body_encoding, 'utf8');
      });
    }

    it('a reference or event name holding a NUL is stored without it', BOUNDED, async () => {
      const body = charge({ reference: `${intent.reference}\u0000` });
      await expectClosed(body, 'malformed');
      const event = await storedEvent(world, body);
      assert.equal(event?.event, 'charge.success');
      assert.equal(event?.reference, `${intent.reference}\ufffd`, 'the NUL replaced, for look-ups only');
    });

    it(
      'an event stored before this check, with a NUL in its data, is closed by the sweep',
      BOUNDED,
      async () => {
        // As the inbox stored it before NULs were checked at the door: unprocessed, event and reference set.
        const body = transferFailed({ gateway_response: 'stored\u0000earlier' });
        await world.ctx.db
          .insertInto('payment_events')
          .values({
            id: newId(),
            received_at: world.ctx.clock.now(),
            body,
            body_encoding: 'utf8',
            body_sha256: sha256(body),
            event: 'transfer.failed',
            reference: transferReference,
            processed_at: null,
            outcome: null,
          })
          .execute();
        const event = await processed(world, body);
        assert.equal(event.outcome, 'malformed');
        assert.equal((await floatTopUpByReference(world.ctx, transferReference)).status, 'pending');
      },
    );
  });

  describe('half a surrogate pair escaped in the JSON: stored, 200, closed as malformed', () => {
    it('in a transfer failure reason (it would reach the alert details, jsonb)', BOUNDED, async () => {
      await expectClosed(transferFailed({ gateway_response: 'down \ud800' }), 'malformed');
    });

    it('in the reference of a dedicated-account charge (ledger metadata, jsonb)', BOUNDED, async () => {
      await expectClosed(dedicatedCharge(`${chargeReference()}\udc00`, {}), 'malformed');
    });

    it('a whole pair is text like any other', BOUNDED, async () => {
      // An emoji escaped as its pair, in a field nobody reads: an ordinary unknown event.
      const body = JSON.stringify({ event: 'charge.dispute.create', data: { note: 'ok' } }).replace(
        'ok',
        '\\ud83d\\ude00',
      );
      await expectClosed(body, 'ignored_event');
    });
  });

  describe('other hostile shapes: 200, closed, nothing moved', () => {
    const cases: Array<[string, () => string, string]> = [
      [
        'an amount of 1e400 (Infinity)',
        () => charge({ amount: 'X' }).replace('"X"', '1e400'),
        'invalid_charge',
      ],
      [
        'an amount above 2^53',
        () => charge({ amount: 'X' }).replace('"X"', '1152921504606846976'),
        'invalid_charge',
      ],
      ['an amount as a string', () => charge({ amount: '50000' }), 'invalid_charge'],
      ['a negative amount', () => charge({ amount: -50_000 }), 'invalid_charge'],
      ['a fractional amount', () => charge({ amount: 50_000.5 }), 'invalid_charge'],
      [
        'a transfer amount as a string',
        () => transferFailed({ amount: `${AMOUNT_KOBO}` }),
        'invalid_transfer',
      ],
      ['a transfer amount above 2^53', () => transferFailed({ amount: 2 ** 60 }), 'invalid_transfer'],
      [
        'data nested 100,000 deep',
        () =>
          JSON.stringify({ event: 'charge.success', data: 'X' }).replace(
            '"X"',
            `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
          ),
        'invalid_charge',
      ],
      [
        'data as a string',
        () => JSON.stringify({ event: 'charge.success', data: intent.reference }),
        'invalid_charge',
      ],
      ['data as null', () => JSON.stringify({ event: 'charge.success', data: null }), 'invalid_charge'],
      [
        'data as an array',
        () => JSON.stringify({ event: 'transfer.failed', data: [transferReference] }),
        'invalid_transfer',
      ],
      ['data as a number', () => JSON.stringify({ event: 'transfer.failed', data: 1 }), 'invalid_transfer'],
      ['no data', () => JSON.stringify({ event: 'charge.success' }), 'invalid_charge'],
      [
        'the charge fields under a __proto__ key',
        () =>
          JSON.stringify({ event: 'charge.success', data: { p: 1 } }).replace(
            '"p":1',
            `"__proto__":{"reference":"${intent.reference}","status":"success","currency":"NGN","amount":50000}`,
          ),
        'invalid_charge',
      ],
      [
        'the event under a __proto__ key',
        () => charge({}).replace('"event":"charge.success"', '"__proto__":{"event":"charge.success"}'),
        'ignored_event',
      ],
      [
        'an event named __proto__',
        () => transferFailed({}).replace('"transfer.failed"', '"__proto__"'),
        'ignored_event',
      ],
      [
        'an event named constructor',
        () => transferFailed({}).replace('"transfer.failed"', '"constructor"'),
        'ignored_event',
      ],
      [
        'an event named toString',
        () => transferFailed({}).replace('"transfer.failed"', '"toString"'),
        'ignored_event',
      ],
      [
        'an event name of 10,000 characters',
        () => JSON.stringify({ event: 'x'.repeat(10_000), data: {} }),
        'ignored_event',
      ],
      ['a JSON array', () => JSON.stringify([{ event: 'charge.success' }]), 'unparseable'],
      ['a JSON string', () => JSON.stringify('charge.success'), 'unparseable'],
      ['JSON null', () => 'null', 'unparseable'],
    ];
    for (const [name, make, outcome] of cases) {
      it(name, BOUNDED, async () => {
        await expectClosed(make(), outcome);
      });
    }
  });

  it('nothing is left unprocessed', BOUNDED, async () => {
    const left = await world.ctx.db
      .selectFrom('payment_events')
      .select('id')
      .where('processed_at', 'is', null)
      .execute();
    assert.deepEqual(left, []);
  });
});
