import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/context.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, failure, get, ok, post, signIn, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { mtn } from '../vtu/purchase-support.ts';
import { type Answer, callbackUrl, dial, PIN, session, ussdUser, walletKobo } from './support.ts';

// The USSD channel of API.md 17.6 through its callback, as Africa's Talking calls it: who may use it,
// the menu (balance, airtime for this phone and another, data five plans to a screen, the last three
// transactions, 0 back), and payments through the purchases' own door: the PIN's lockout shared with
// the app, the USSD limits, the purchase in the app's history and inbox, and nothing of the PIN, the
// inputs or the callback's token in the log.

describe(`the USSD channel (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const lines: string[] = [];
  const logged = () => lines.join('\n');

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    world = await createWorld({
      logger: createLogger({ logLevel: 'info' }, sink),
      env: { USSD_SINGLE_MAX: '1000', USSD_DAILY_MAX: '1500', USSD_ALLOWED_IPS: '127.0.0.1,::1' },
    });
  });
  after(() => world?.close());

  const screens = (answers: Answer[]) => answers.map((a) => `${a.type} ${a.screen}`);

  it('answers a wrong token with the ordinary 404, and a right one in plain text', async () => {
    const user = await ussdUser(world, 0);
    const wrong = await dial(world, {
      phone: user.phone,
      sessionId: 'ATUid_1',
      inputs: [],
      token: 'x'.repeat(32),
    });
    assert.equal(wrong.status, 404);
    const envelope = JSON.parse(wrong.body) as { success: boolean; error: { code: string } };
    assert.deepEqual([envelope.success, envelope.error.code], [false, 'NOT_FOUND']);
    const right = await dial(world, { phone: user.phone, sessionId: 'ATUid_1', inputs: [] });
    assert.equal(right.status, 200);
    assert.equal(right.type, 'CON');
    assert.match(right.screen, /1 Balance\n2 Airtime\n3 Data\n4 Last 3 transactions/);
  });

  it('answers END with the balance', async () => {
    const user = await ussdUser(world, 1234.5);
    const answers = await session(world, user.phone, ['1']);
    assert.deepEqual(screens(answers).slice(1), ['END Your billrail balance is N1,234.50.']);
  });

  it('buys airtime for this phone through the purchases, in the app’s history and inbox, never by SMS', async () => {
    const user = await ussdUser(world, 2000);
    const smsBefore = world.ctx.sandbox?.state.lastSms.get(`+234${user.phone.slice(1)}`);
    const answers = await session(world, user.phone, ['2', '1', '500', PIN]);
    const end = answers.at(-1)!;
    assert.equal(end.type, 'END');
    const reference = /Ref (\w+)\./.exec(end.screen)?.[1];
    assert.ok(reference !== undefined, end.screen);
    assert.equal(
      end.screen,
      `Processing N500 MTN airtime to ${user.phone}. Ref ${reference}. The result will be in your billrail app.`,
    );
    assert.equal(await walletKobo(world, user.userId), 150_000n, 'N500 debited once');
    const { items } = ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        {},
        { token: user.accessToken },
      ),
    );
    assert.equal(items.length, 1);
    assert.equal(items[0]!.reference, reference);
    await world.ctx.modules.vtu.api.sendEnded(items[0]!.id);
    await runDomainEvents(world);
    const inbox = ok(
      await get<{ items: Array<{ title: string; body: string }> }>(
        world,
        'listNotifications',
        {},
        { token: user.accessToken },
      ),
    );
    assert.ok(inbox.items.length >= 1, 'the outcome reached the inbox');
    assert.equal(world.ctx.sandbox?.state.lastSms.get(`+234${user.phone.slice(1)}`), smsBefore, 'no SMS');
    console.log(`A whole session:\n${answers.map((a, i) => `[${i}] ${a.body}`).join('\n')}`);
  });

  it('keeps the PIN, the inputs and the token out of the log', () => {
    const log = logged();
    const token = world.ctx.config.ussd.callbackToken!;
    assert.ok(log.includes('ussd step'), 'the steps are logged');
    assert.ok(!log.includes(token), 'the token is not in the log');
    assert.ok(!log.includes(`2*1*500*${PIN}`) && !log.includes(`2%2A1%2A500%2A${PIN}`), 'the text is not');
    assert.ok(!new RegExp(`\\b${PIN}\\b`).test(log), 'the PIN is not');
    assert.ok(!log.includes(callbackUrl(world)), 'nor the callback URL');
  });
});
