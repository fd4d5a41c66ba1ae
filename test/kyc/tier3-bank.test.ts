import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PaymentProviderError } from '../../src/providers/payments/payment-provider.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import {
  documentCount,
  expectError,
  expectValidationAt,
  submissions,
  submitTier3,
  userAtTier,
} from './kyc-support.ts';

// Tier 3's bank is one of listBanks' (API.md section 16): a code the payment provider's list does not
// hold, or holds only for a retired bank, is refused as bad input before anything is stored and before
// the KYC provider is asked about the account.

describe(`KYC tier 3 bank code (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let lookups = 0;
  let stored = 0;

  before(async () => {
    world = await createWorld();
    const { provider, documents } = world.ctx.kyc;
    const lookup = provider.lookupBankAccount.bind(provider);
    provider.lookupBankAccount = async (request) => {
      lookups += 1;
      return lookup(request);
    };
    const put = documents.put.bind(documents);
    documents.put = async (...args) => {
      stored += 1;
      return put(...args);
    };
  });
  after(() => world.close());

  it('refuses a code that is no bank of listBanks with 400 on data.bankCode, storing and asking nothing', async () => {
    const user = await userAtTier(world, 2);
    // 000 names no bank; 063 was Diamond Bank's too, but only as Access Bank (Diamond) is it a bank
    // today, so it is accepted below; 99999 is well formed and unknown.
    for (const bankCode of ['000', '99999']) {
      const before = { lookups, stored, documents: await documentCount(world) };
      const error = expectValidationAt(await submitTier3(world, user, { bankCode }), 'data.bankCode');
      assert.match(JSON.stringify(error.details), /listBanks/);
      assert.deepEqual({ lookups, stored, documents: await documentCount(world) }, before, bankCode);
    }
    assert.deepEqual(await submissions(world, user.userId, 3), []);
    // A code of the list goes on to the provider and into review.
    assert.equal(ok(await submitTier3(world, user, { bankCode: '063' })).status, 'pending');
    assert.equal((await submissions(world, user.userId, 3)).length, 1);
  });

  it('answers 502 and keeps nothing when the bank list cannot be read and none is cached', async () => {
    const fresh = await createWorld();
    try {
      fresh.ctx.payments.listBanks = async () => {
        throw new PaymentProviderError('did not answer (test)', { definite: false });
      };
      const user = await userAtTier(fresh, 2);
      expectError(await submitTier3(fresh, user, { bankCode: '058' }), 502, 'UPSTREAM_UNAVAILABLE');
      assert.deepEqual(await submissions(fresh, user.userId, 3), []);
      assert.equal(await documentCount(fresh, user.userId), 0);
    } finally {
      await fresh.close();
    }
  });
});
