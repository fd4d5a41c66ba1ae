import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { publishedEvents, runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { expectError, expectValidationAt, kycUser } from '../kyc/kyc-support.ts';
import { advanceClock, PIN } from '../vtu/purchase-support.ts';
import { member, transferCall } from './support.ts';

// Wallet-to-wallet transfers (API.md section 14): who may send to whom, the limits, the one posting
// across both wallets, both histories and the recipient's notification.

type HistoryItem = { reference: string; direction: 'credit' | 'debit'; amount: number; description: string };

const history = async (world: World, user: SignedIn) =>
  ok(await get<{ items: HistoryItem[] }>(world, 'listTransactions', {}, { token: user.accessToken })).items;

describe('wallet-to-wallet transfers', () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { TRANSFER_MAX: '50000', TRANSFER_DAILY_MAX: '80000' } });
  });
  after(() => world.close());

  it('moves the amount in one posting, shows it in both histories and tells the recipient', async () => {
    const sender = await member(world, 2, 5_000);
    const recipient = await member(world, 2);
    const sent = ok(await transferCall(world, sender, recipient, 1_234.56, { narration: 'for lunch' }));
    assert.equal(sent.amount, 1_234.56);
    assert.equal(sent.recipient.name, 'Adebayo O.');
    assert.match(sent.reference, /^TRF\d{12}[0-9a-f]{20}$/);
    assert.equal(await walletKobo(world, sender.userId), 500_000n - 123_456n);
    assert.equal(await walletKobo(world, recipient.userId), 123_456n);

    const [out] = await history(world, sender);
    const [into] = await history(world, recipient);
    assert.deepEqual([out!.direction, out!.amount], ['debit', 1_234.56]);
    assert.deepEqual([into!.direction, into!.amount], ['credit', 1_234.56]);
    assert.equal(out!.reference, into!.reference, 'one posting, seen from both wallets');
    assert.match(into!.description, /from Adebayo O\. to Adebayo O\.: for lunch/);

    const events = (await publishedEvents(world, 'wallet.transfer_received')).filter(
      (e) => e.transferId === sent.id,
    );
    assert.equal(events.length, 1);
    assert.equal(events[0]!.userId, recipient.userId);
    await runDomainEvents(world);
    const inbox = ok(
      await get<{ items: Array<{ kind: string; body: string }> }>(
        world,
        'listNotifications',
        {},
        { token: recipient.accessToken },
      ),
    ).items;
    const note = inbox.find((n) => n.kind === 'wallet_transfer_received');
    assert.ok(note, JSON.stringify(inbox));
    assert.match(note.body, /Adebayo O\. sent you ₦1,234\.56/);
    await assertLedgerOk(world);
  });

  it('replays the first answer for the same Idempotency-Key and moves the money once', async () => {
    const sender = await member(world, 2, 1_000);
    const recipient = await member(world, 1);
    const key = crypto.randomUUID();
    const call = () =>
      post(
        world,
        'transferToUser',
        { phone: recipient.phone, amount: 300, pin: PIN },
        { token: sender.accessToken, idempotencyKey: key },
      );
    const first = ok(await call());
    const again = ok(await call());
    assert.deepEqual(again, first);
    assert.equal(await walletKobo(world, sender.userId), 70_000n);
    assert.equal(await walletKobo(world, recipient.userId), 30_000n);
  });

  it('lookupRecipient masks the surname; unknown phones and users below Tier 1 are 404; your own is 400', async () => {
    const sender = await member(world, 2);
    const recipient = await member(world, 2);
    const lookup = (phone: string) =>
      post<{ name: string; nameVerified: boolean }>(
        world,
        'lookupRecipient',
        { phone },
        { token: sender.accessToken },
      );
    assert.deepEqual(ok(await lookup(recipient.phone)), { name: 'Adebayo O.', nameVerified: true });
    // Below Tier 2 the name is the one typed: shown, as API.md section 14 says, but marked unverified.
    const tier1 = await member(world, 1);
    assert.deepEqual(ok(await lookup(tier1.phone)), { name: 'Adebayo O.', nameVerified: false });
    const unverified = await kycUser(world);
    expectError(await lookup(unverified.phone), 404, 'NOT_FOUND');
    expectError(await lookup('08039999991'), 404, 'NOT_FOUND');
    expectValidationAt(await lookup(sender.phone), 'data.phone');
    expectValidationAt(await lookup('12345'), 'data.phone');
  });

  it('refuses a sender below Tier 2, a wrong PIN, a recipient below Tier 1 and yourself, moving nothing', async () => {
    const tier1 = await member(world, 1, 1_000);
    const sender = await member(world, 2, 1_000);
    const recipient = await member(world, 1);
    const unverified = await kycUser(world);

    const tierError = expectError(await transferCall(world, tier1, recipient, 100), 403, 'KYC_TIER_REQUIRED');
    assert.equal(tierError.details?.requiredTier, 2);
    expectError(
      await post(world, 'lookupRecipient', { phone: recipient.phone }, { token: tier1.accessToken }),
      403,
      'KYC_TIER_REQUIRED',
    );
    expectError(await transferCall(world, sender, recipient, 100, { pin: '1111' }), 403, 'INVALID_PIN');
    expectError(await transferCall(world, sender, unverified, 100), 404, 'NOT_FOUND');
    expectError(await transferCall(world, sender, { phone: '08039999992' }, 100), 404, 'NOT_FOUND');
    expectValidationAt(await transferCall(world, sender, sender, 100), 'data.phone');
    expectValidationAt(await transferCall(world, sender, recipient, 100.001), 'data.amount');
    expectValidationAt(
      await transferCall(world, sender, recipient, 100, { narration: 'x'.repeat(101) }),
      'data.narration',
    );
    assert.equal(await walletKobo(world, sender.userId), 100_000n);
    assert.equal(await walletKobo(world, tier1.userId), 100_000n);
    assert.equal(await walletKobo(world, recipient.userId), 0n);
  });

  it('answers the per-transfer limits with 422 and details.limit, and an uncovered amount with 409', async () => {
    const sender = await member(world, 2, 60_000);
    const recipient = await member(world, 1);
    const low = expectError(await transferCall(world, sender, recipient, 99.99), 422, 'BELOW_MINIMUM');
    assert.equal(low.details?.limit, 100);
    const high = expectError(await transferCall(world, sender, recipient, 50_000.01), 422, 'ABOVE_MAXIMUM');
    assert.equal(high.details?.limit, 50_000);
    const poor = await member(world, 2, 100);
    expectError(await transferCall(world, poor, recipient, 100.01), 409, 'INSUFFICIENT_FUNDS');
    assert.equal(await walletKobo(world, poor.userId), 10_000n);
    assert.equal(await walletKobo(world, recipient.userId), 0n);
  });

  it('keeps a daily total per sender, with what is left, and a new Lagos day starts afresh', async () => {
    const sender = await member(world, 2, 200_000);
    const recipient = await member(world, 1);
    ok(await transferCall(world, sender, recipient, 50_000));
    ok(await transferCall(world, sender, recipient, 29_950));
    const over = expectError(await transferCall(world, sender, recipient, 100), 422, 'ABOVE_MAXIMUM');
    assert.deepEqual([over.details?.limit, over.details?.remaining], [80_000, 50]);
    assert.equal(await walletKobo(world, recipient.userId), 7_995_000n);

    await advanceClock(world, 86_400);
    const again = await signInAgain(world, sender.phone);
    ok(await transferCall(world, again, recipient, 50_000));
    assert.equal(await walletKobo(world, recipient.userId), 12_995_000n);
    await assertLedgerOk(world);
  });
});
