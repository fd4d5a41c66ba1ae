import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { type PgProxy, startPgProxy } from '../helpers/pg-proxy.ts';
import { until } from '../helpers/until.ts';
import { type ApiResponse, createWorld, post, type SignedIn, type World } from '../helpers/world.ts';
import { member } from '../transfers/support.ts';
import { PIN, recordedPurchases } from '../vtu/purchase-support.ts';

// PIN guesses racing each other (issue 25 item 2). Every PIN check of a user must be decided,
// counted and answered in one order, on the user row read under its lock: once the fifth wrong PIN
// is counted, every later check answers PIN_LOCKED, the right PIN included. The order is made
// certain, not left to timing: the right PINs go to a second service on the same database whose
// connections pass through a proxy (test/helpers/pg-proxy.ts) that holds back the answer of their
// reads of the user, carried out before any wrong PIN was counted; the wrong PINs, all at once, go
// to the first service and are answered; only then are the right PINs' reads let through. PGlite
// has one connection, so nothing is in flight beside anything else there: these run on PostgreSQL.

const skip = onPostgres()
  ? false
  : 'needs DATABASE_URL: PGlite runs one statement at a time, no lock to wait on';

/** A Glo number: airtime or data "for MTN" to it answers NETWORK_MISMATCH once the PIN passed. */
const gloPhone = () => `0805${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

const wrongPin = (i: number) => String(1000 + i);

const codeOf = (answer: ApiResponse): string =>
  answer.body.success ? 'ok' : (answer.body as { error: { code: string } }).error.code;

/** Requests sent one after the other, each with its answer kept and counted as it arrives. */
function sender() {
  const answers: Promise<ApiResponse>[] = [];
  let answered = 0;
  return {
    answers,
    get answered() {
      return answered;
    },
    send(request: Promise<ApiResponse>) {
      answers.push(
        request.then((answer) => {
          answered++;
          return answer;
        }),
      );
    },
  };
}

describe('PIN checks in one order per user (PostgreSQL)', { skip }, () => {
  let world: World;
  let proxied: World;
  let proxy: PgProxy;

  before(async () => {
    world = await createWorld();
    proxy = await startPgProxy(world.ctx.database.url!);
    proxied = await createWorld({ sameDatabaseAs: world, databaseUrl: async () => proxy.url });
  });
  after(async () => {
    await proxied?.close();
    await proxy?.close();
    await world?.close();
  });

  const airtime = (service: World, user: SignedIn, pin: string) =>
    post(
      service,
      'buyAirtime',
      { network: 'mtn', phone: gloPhone(), amount: 100, pin },
      { token: user.accessToken },
    );

  it('a right PIN read before 5 wrong ones are counted and judged after them is answered PIN_LOCKED', async () => {
    const user = await member(world, 1, 1_000);
    // The purchases' batched read of the buyer (tier and PIN state), on the proxied service.
    const hold = proxy.holdAnswers(/auth\.buyer-states/);
    const right = sender();
    let wrongs: ApiResponse[];
    try {
      right.send(airtime(proxied, user, PIN));
      await until(
        () => hold.held() === 1 || right.answered > 0,
        "the right PIN's read of the buyer carried out",
      );
      assert.equal(right.answered, 0);
      // Five wrong PINs at once, counted while the right one is in flight.
      wrongs = await Promise.all(Array.from({ length: 5 }, (_, i) => airtime(world, user, wrongPin(i))));
    } finally {
      hold.release();
    }
    assert.deepEqual(wrongs.map(codeOf).sort(), [
      'INVALID_PIN',
      'INVALID_PIN',
      'INVALID_PIN',
      'INVALID_PIN',
      'PIN_LOCKED',
    ]);
    const [answer] = await Promise.all(right.answers);
    assert.deepEqual(
      [answer!.status, codeOf(answer!)],
      [423, 'PIN_LOCKED'],
      'the right PIN, judged after the fifth wrong one was counted',
    );
    assert.equal(await walletKobo(world, user.userId), 100_000n);
    assert.equal(await recordedPurchases(world, user.userId), 0);
  });

  it('a right PIN waits for a check holding the user row, and is judged on the row as that check left it', async () => {
    const user = await member(world, 1, 1_000);
    const client = new pg.Client({ connectionString: world.ctx.database.url });
    await client.connect();
    const observer = new pg.Client({ connectionString: world.ctx.database.url });
    await observer.connect();
    const right = sender();
    try {
      await client.query('begin');
      await client.query('select 1 from users where id = $1 for update', [user.userId]);
      right.send(airtime(world, user, PIN));
      await until(async () => {
        if (right.answered > 0) return true;
        const { rows } = await observer.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return rows[0]!.n === 1;
      }, 'the right PIN waiting for the user row (or answered)');
      assert.equal(right.answered, 0, 'the right PIN was judged without waiting for the row lock');
      // What five wrong PINs counted under the lock leave: the PIN locked for 30 minutes.
      await client.query(
        `update users set pin_failed_count = 0, pin_locked_until = $2::timestamptz + interval '30 minutes' where id = $1`,
        [user.userId, world.ctx.clock.now()],
      );
      await client.query('commit');
    } finally {
      await client.end();
      await observer.end();
    }
    const [answer] = await Promise.all(right.answers);
    assert.deepEqual([answer!.status, codeOf(answer!)], [423, 'PIN_LOCKED']);
  });

  it('25 wrong PINs at once across the PIN-taking operations while 5 right ones are in flight: 4 INVALID_PIN, the rest PIN_LOCKED, nothing moves', async () => {
    const user: SignedIn = await member(world, 2, 1_000);
    // Each is refused by its own rule right after the PIN (network, plan, unknown service, own
    // number), so that no money could move even if a PIN passed.
    const operations: Array<[string, Record<string, unknown>]> = [
      ['buyAirtime', { network: 'mtn', phone: gloPhone(), amount: 100 }],
      ['buyData', { network: 'mtn', plan_id: 'no-such-plan', phone: gloPhone(), amount: 100 }],
      ['sellAirtime', { network: 'mtn', phone: gloPhone(), amount: 100 }],
      [
        'buySocialService',
        { serviceId: 'no-such-service', link: 'https://example.com/p/1', quantity: 100, amount: 1 },
      ],
      ['transferToUser', { phone: user.phone, amount: 100 }],
    ];
    const call = (service: World, i: number, pin: string) => {
      const [name, input] = operations[i % operations.length]!;
      return post(service, name, { ...input, pin }, { token: user.accessToken });
    };
    // The reads of the user before the PIN: the purchases' batched read, the transfer's read of its sender.
    const hold = proxy.holdAnswers(/auth\.buyer-states|^select \* from "users" where "id" = \$1$/);
    const rights = sender();
    let wrongs: ApiResponse[];
    try {
      // One at a time, each seen read before the next: the four purchases in four batches.
      for (let i = 0; i < operations.length; i++) {
        rights.send(call(proxied, i, PIN));
        await until(
          () => hold.held() === i + 1 || rights.answered > 0,
          `the right PIN of ${operations[i]![0]} read`,
        );
        assert.equal(rights.answered, 0);
      }
      wrongs = await Promise.all(Array.from({ length: 25 }, (_, i) => call(world, i, wrongPin(i))));
    } finally {
      hold.release();
    }
    const answers = [...wrongs, ...(await Promise.all(rights.answers))];
    const codes = answers.map(codeOf);
    const failed = answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${JSON.stringify(a.body)}`);
    assert.deepEqual(failed, [], 'no 5xx');
    const count = (code: string) => codes.filter((c) => c === code).length;
    assert.equal(count('INVALID_PIN'), 4, codes.join(','));
    assert.equal(count('PIN_LOCKED'), 26, codes.join(','));
    assert.deepEqual(
      codes.slice(25),
      Array(5).fill('PIN_LOCKED'),
      'the right PINs, after the fifth wrong one',
    );
    // Nothing moved: no debit, no purchase, no transfer.
    assert.equal(await walletKobo(world, user.userId), 100_000n);
    assert.equal(await recordedPurchases(world, user.userId), 0);
    const transfers = await world.ctx.db
      .selectFrom('wallet_transfers')
      .select('id')
      .where('sender_id', '=', user.userId)
      .execute();
    assert.equal(transfers.length, 0);
    // And the lock holds afterwards, for the right PIN too.
    const later = await call(world, 0, PIN);
    assert.deepEqual([later.status, codeOf(later)], [423, 'PIN_LOCKED']);
  });
});
