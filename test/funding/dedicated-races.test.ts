import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { assertLedgerOk, sendWebhook, walletKobo } from './support.ts';

// A bank transfer into a dedicated account has no top-up intent to lock: its charge reference is the
// provider's. Paystack delivers a charge again and again, in other bytes, and two processes each
// drain what they stored right away, one event alone (post()) or many in a batch (postBatch). Every
// credit of an account locks the account's row before the ledger, so the drains of one account's
// charges wait on each other: the later one finds the reference credited, and no batch fails
// (deadlocked, or refused by the unique reference) and runs again event by event. PGlite runs one
// transaction at a time, so this proves something only on PostgreSQL.

const copies = 60;
const rounds = 30;
const amountKobo = 50_000;

describe('bank transfers into a dedicated account, delivered many times to two processes', {
  skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite runs one transaction at a time',
}, () => {
  const errors: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
  let first: World;
  let second: World;
  let user: SignedIn;
  let accountNumber: string;

  before(async () => {
    first = await createWorld({ logger });
    second = await createWorld({ logger, sameDatabaseAs: first });
    user = await userAtTier(first, 2);
    ({ accountNumber } = ok(
      await post<{ accountNumber: string }>(
        first,
        'requestDedicatedAccount',
        {},
        { token: user.accessToken },
      ),
    ));
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('each charge is credited once, every copy is answered, and no drain fails or logs an error', async () => {
    for (let round = 0; round < rounds; round++) {
      const before = await walletKobo(first, user.userId);
      const reference = `dva-race-${Date.now()}-${round}`;
      // The same charge in other bytes (a delivery id), and a quarter of them with another amount:
      // only the first credit of the reference counts, whatever it carried.
      const bodies = Array.from({ length: copies }, (_, i) =>
        JSON.stringify({
          event: 'charge.success',
          data: {
            id: i,
            reference,
            status: 'success',
            amount: i % 4 === 3 ? amountKobo + i : amountKobo,
            currency: 'NGN',
            channel: 'dedicated_nuban',
            authorization: { channel: 'dedicated_nuban', receiver_bank_account_number: accountNumber },
          },
        }),
      );
      const answers = await Promise.all(
        bodies.map((body, i) => sendWebhook(i % 2 === 0 ? first : second, body)),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        bodies.map(() => 200),
      );
      await Promise.all([first, second].map((w) => w.ctx.jobs.runNow(paymentWebhookSweepJob)));

      const events = await first.ctx.db
        .selectFrom('payment_events')
        .select(['outcome', 'processed_at'])
        .where('reference', '=', reference)
        .execute();
      assert.equal(events.length, copies);
      assert.ok(events.every((e) => e.processed_at !== null));
      assert.equal(events.filter((e) => e.outcome === 'credited').length, 1);
      assert.equal(events.filter((e) => e.outcome === 'already_credited').length, copies - 1);

      const credited = await first.ctx.db
        .selectFrom('ledger_transactions')
        .select('id')
        .where('reference', '=', `dva:${reference}`)
        .execute();
      assert.equal(credited.length, 1);
      const gained = (await walletKobo(first, user.userId)) - before;
      assert.ok(
        bodies.some(
          (body) => BigInt((JSON.parse(body) as { data: { amount: number } }).data.amount) === gained,
        ),
        `the wallet gained one charge's amount, not ${gained} kobo`,
      );
    }
    assert.deepEqual(errors, []);
    await assertLedgerOk(first);
  });
});
