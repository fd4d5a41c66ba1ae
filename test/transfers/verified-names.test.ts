import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KycProvider } from '../../src/providers/kyc/kyc-provider.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { kycUser, submitTier2, userAtTier } from '../kyc/kyc-support.ts';
import { fund, PIN } from '../vtu/purchase-support.ts';
import { member, transferCall } from './support.ts';

// The name others see is the verified name (API.md section 4): once Tier 2 is approved the profile
// names are the ones that matched the NIN record and can no longer change, and every place where
// another person sees a user (lookupRecipient, transfers and their records and notifications, the
// dedicated account) shows it. A recipient without a verified name (Tier 1) is marked as such.

type HistoryItem = { reference: string; direction: 'credit' | 'debit'; counterparty?: string };

const history = async (world: World, user: SignedIn) =>
  ok(await get<{ items: HistoryItem[] }>(world, 'listTransactions', {}, { token: user.accessToken })).items;

const lookup = async (world: World, sender: SignedIn, phone: string) =>
  ok(
    await post<{ name: string; nameVerified: boolean }>(
      world,
      'lookupRecipient',
      { phone },
      { token: sender.accessToken },
    ),
  );

const impostor = { firstName: 'Billrail', lastName: 'Customer Care Refunds' };

describe('the name others see is the verified name', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('a rename while Tier 2 is being decided does not survive it: the matched name is shown everywhere', async () => {
    const payee = await userAtTier(
      world,
      1,
      await kycUser(world, { firstName: 'Adebayo', lastName: 'Ogunlesi' }),
    );
    // The rename lands while the provider is being asked about the NIN (after the service read the
    // profile it sends, before it records the decision): the real sandbox provider still answers.
    const provider: KycProvider = world.ctx.kyc.provider;
    const lookupNin = provider.lookupNin.bind(provider);
    provider.lookupNin = async (request) => {
      ok(await post(world, 'updateProfile', impostor, { token: payee.accessToken }));
      return lookupNin(request);
    };
    try {
      assert.equal(ok(await submitTier2(world, payee)).status, 'approved');
    } finally {
      provider.lookupNin = lookupNin;
    }
    const me = ok(
      await get<{ firstName: string; lastName: string; nameVerified: boolean }>(
        world,
        'getMe',
        {},
        { token: payee.accessToken },
      ),
    );
    assert.deepEqual([me.firstName, me.lastName, me.nameVerified], ['Adebayo', 'Ogunlesi', true]);

    const sender = await member(world, 2, 5_000);
    assert.deepEqual(await lookup(world, sender, payee.phone), { name: 'Adebayo O.', nameVerified: true });
    const sent = ok(await transferCall(world, sender, payee, 100));
    assert.equal(sent.recipient.name, 'Adebayo O.');
    const [out] = await history(world, sender);
    assert.equal(out?.counterparty, 'Adebayo O.');

    // The other way: the payee's name in the sender's notification and history.
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: payee.accessToken }));
    await fund(world, payee.userId, 1_000);
    ok(await transferCall(world, payee, sender, 200));
    const [into] = await history(world, sender);
    assert.deepEqual([into?.direction, into?.counterparty], ['credit', 'Adebayo O.']);
    await runDomainEvents(world);
    const inbox = ok(
      await get<{ items: Array<{ kind: string; body: string }> }>(
        world,
        'listNotifications',
        {},
        { token: sender.accessToken },
      ),
    ).items;
    const note = inbox.find((n) => n.kind === 'wallet_transfer_received');
    assert.match(note?.body ?? '', /^Adebayo O\. sent you ₦200/);

    // The dedicated account is opened in the verified (NIN) name.
    const account = ok(
      await post<{ accountName: string }>(world, 'requestDedicatedAccount', {}, { token: payee.accessToken }),
    );
    assert.equal(account.accountName, 'BILLRAIL/OGUNLESI ADEBAYO');
  });

  it('a recipient without a verified name is shown by the name they typed, marked as not verified', async () => {
    const sender = await member(world, 2, 5_000);
    const unverified = await userAtTier(world, 1, await kycUser(world, impostor));
    const found = await lookup(world, sender, unverified.phone);
    // API.md section 14 shows a Tier 1 recipient by name; the sender is told it is not a verified one.
    assert.deepEqual(found, { name: 'Billrail C.', nameVerified: false });
  });
});
