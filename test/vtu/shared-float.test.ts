import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { checkLedger } from '../../src/ledger/check.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { sandboxPayments, startWebhookReceiver, type WebhookReceiver } from '../payments/helpers.ts';
import { type Buyer, buyCall, buyer, mtn } from './purchase-support.ts';

// One provider float, three service processes (issue 43 item 2, decision 0051). Each service is a
// world of its own (its own context, pool, batches and memory) on one PostgreSQL database, and all
// three send to one sandbox provider (the first world's simulators, reached over HTTP as a real
// provider's would be). The provider's balance covers exactly `covered` purchases; many more are
// bought at once through the three. What each process was sending was once kept in its memory, so
// each subtracted only its own sends from the balance it read and together they sent more than the
// float held: the provider refused the rest for want of float (failed, refunded). Now what is
// reserved is decided in the database under the provider's row: no more than the float is sent, and
// the rest waits for one float top-up, unsent.
//
// The three first read the provider's balance together (readTogether): a real provider answers its
// balance in tens of milliseconds, long enough for every process to read the same figure before any
// sends; the sandbox answers in one, so the test holds the first reads until all three have asked.

const skip = !onPostgres() && 'needs PostgreSQL (DATABASE_URL): three services cannot share a PGlite';

/** Purchases the provider's balance covers, and purchases bought through each service. */
const covered = 6;
const perService = 6;
/** ₦100 of MTN airtime: its wholesale price at the sandbox is its face value. */
const airtimeNaira = 100;
const wholesaleKobo = BigInt(airtimeNaira * 100);
const walletNaira = 5_000;

/**
 * Holds the first `count` balance reads of the bills provider, across the services, until all of them
 * have been asked; then each reads the provider's real balance. Later reads go straight through.
 */
function readTogether(services: World[], count: number): void {
  let asked = 0;
  let open: () => void = () => {};
  const together = new Promise<void>((resolve) => {
    open = resolve;
  });
  for (const service of services) {
    const adapter = service.ctx.vtuProviders.bills;
    const read = adapter.balance.bind(adapter);
    adapter.balance = async () => {
      if (asked < count) {
        asked += 1;
        if (asked === count) open();
        await together;
      }
      return read();
    };
  }
}

describe(`one provider float shared by three services (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, {
  skip,
}, () => {
  let services: World[] = [];
  let receiver: WebhookReceiver;
  before(async () => {
    const env = { BILLS_FUNDING_ACCOUNT: '058:9900000020:Sandbox Bills Aggregator' };
    const provider = await createWorld({ env });
    services = [provider];
    for (let i = 0; i < 2; i++) {
      services.push(
        await createWorld({
          sameDatabaseAs: provider,
          env: { ...env, SANDBOX_VTU_BASE_URL: provider.baseUrl },
        }),
      );
    }
    // The top-up's transfer webhooks are caught and left alone: the top-up stays pending, and the
    // purchases waiting for it stay unsent while the test looks.
    receiver = await startWebhookReceiver();
    for (const service of services) sandboxPayments(service).webhookUrlOverride = receiver.url;
  });
  after(async () => {
    await receiver?.close();
    // The first world owns the database: closed last.
    for (const service of services.toReversed()) await service.close();
  });

  it('sends no more than the float holds; the rest waits for one top-up, and none fails', async () => {
    const [provider] = services as [World, ...World[]];
    const bills = provider.ctx.sandbox!.state.bills;
    bills.balanceKobo = BigInt(covered) * wholesaleKobo;
    const buyers: Buyer[] = [];
    for (const service of services) buyers.push(await buyer(service, walletNaira));
    readTogether(services, services.length);

    // All at once, through the three.
    const accepted = await Promise.all(
      services.flatMap((service, s) =>
        Array.from({ length: perService }, async () =>
          ok(
            await buyCall(service, buyers[s]!, 'buyAirtime', {
              network: 'mtn',
              phone: mtn('5'),
              amount: airtimeNaira,
            }),
          ),
        ),
      ),
    );
    await Promise.all(services.map((service) => service.ctx.modules.vtu.api.drained()));

    const ids = accepted.map((p) => p.id);
    const rows = await provider.ctx.db
      .selectFrom('vtu_transactions')
      .select(['id', 'reference', 'status', 'sent_at', 'funding_reference', 'amount', 'user_id'])
      .where('id', 'in', ids)
      .execute();
    assert.equal(rows.length, ids.length);
    const failed = rows.filter((p) => p.status === 'failed');
    assert.deepEqual(failed, [], 'none failed: the provider never refused one for want of float');
    const sent = rows.filter((p) => p.sent_at !== null);
    const waiting = rows.filter((p) => p.sent_at === null);
    const references = new Set(rows.map((p) => p.reference));
    const received = [...bills.orders.values()].filter((o) => references.has(o.requestId));
    assert.ok(
      received.length <= covered,
      `the provider received ${received.length}, the float covers ${covered}`,
    );
    assert.equal(received.length, sent.length, 'each purchase sent reached the provider');
    assert.ok(sent.length > 0, 'the float was used');
    assert.ok(
      sent.every((p) => p.status === 'success'),
      'each purchase sent was delivered',
    );
    assert.equal(
      bills.balanceKobo,
      BigInt(covered - sent.length) * wholesaleKobo,
      "the provider's float: what is left",
    );

    // The rest wait, unsent, for one float top-up: the first process short of float started it, and
    // the others found it pending.
    const topUps = await provider.ctx.db
      .selectFrom('float_top_ups')
      .select(['reference', 'status'])
      .where('provider', '=', 'bills')
      .execute();
    if (waiting.length > 0) {
      assert.equal(topUps.length, 1, 'one top-up for every process');
      for (const p of waiting) {
        assert.equal(p.status, 'processing');
        assert.equal(p.funding_reference, topUps[0]!.reference, 'waiting for the top-up');
      }
    }
    assert.equal(await provider.ctx.modules.vtu.api.floatReservedKobo('bills'), 0n, 'settled: nothing held');

    // Every kobo: each buyer paid for each purchase, none refunded (the waiting ones are held in flight).
    for (const user of buyers) {
      const mine = rows.filter((p) => p.user_id === user.userId);
      const paid = mine.reduce((sum, p) => sum + p.amount, 0n);
      const { rows: wallet } = await sql<{ balance: bigint }>`
        select balance from ledger_accounts where code = ${`wallet:${user.userId}`}`.execute(provider.ctx.db);
      assert.equal(wallet[0]?.balance, BigInt(walletNaira * 100) - paid);
    }
    const check = await checkLedger(provider.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
    process.stdout.write(
      `# shared float: ${sent.length} of ${rows.length} sent (float for ${covered}), ${waiting.length} waiting\n`,
    );
  });
});
