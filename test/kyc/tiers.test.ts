import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import type { KycProvider } from '../../src/providers/kyc/kyc-provider.ts';
import { e164 } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, get, ok, post, signIn, type World } from '../helpers/world.ts';
import {
  eventJobs,
  expectError,
  expectValidationAt,
  FRESH_STATUS,
  getStatus,
  kycTierOfMe,
  kycUser,
  matchingNin,
  submissions,
  submitTier1,
  submitTier2,
  submitTier3,
  userAtTier,
} from './kyc-support.ts';

// Tiers 1 and 2 and the order of tiers, through HTTP against the sandbox KYC provider (API.md
// sections 7 and 8, SPEC.md item 13): liveness tokens sandbox-pass / sandbox-fail, NINs that resolve
// to the caller's name unless they start with 9 (someone else) or are 00000000000 (no record).

describe(`KYC tiers 1 and 2 (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  describe('getKycStatus', () => {
    it('shows tier 0 and every tier "none" for a fresh user', async () => {
      const user = await signIn(world);
      assert.deepEqual(await getStatus(world, user), FRESH_STATUS);
      assert.equal(await kycTierOfMe(world, user), 0);
    });

    it('needs a bearer token', async () => {
      expectError(await get(world, 'getKycStatus'), 401, 'UNAUTHENTICATED');
    });
  });

  describe('tier 1 (liveness)', () => {
    it('approves sandbox-pass: tier 1 in getKycStatus and getMe', async () => {
      const user = await signIn(world);
      assert.deepEqual(ok(await submitTier1(world, user, 'sandbox-pass')), { tier: 1, status: 'approved' });
      const status = await getStatus(world, user);
      assert.equal(status.tier, 1);
      assert.deepEqual(status.tiers, [
        { tier: 1, status: 'approved' },
        { tier: 2, status: 'none' },
        { tier: 3, status: 'none' },
      ]);
      assert.equal(await kycTierOfMe(world, user), 1);
      const rows = await submissions(world, user.userId);
      assert.deepEqual(
        rows.map((r) => [r.tier, r.status]),
        [[1, 'approved']],
      );
      assert.equal(rows[0]?.details.livenessReference, 'sandbox-pass');
    });

    it('rejects sandbox-fail with a reason, and leaves the user at tier 0', async () => {
      const user = await signIn(world);
      const view = ok(await submitTier1(world, user, 'sandbox-fail'));
      assert.equal(view.tier, 1);
      assert.equal(view.status, 'rejected');
      assert.match(view.reason ?? '', /liveness/i);
      const status = await getStatus(world, user);
      assert.equal(status.tier, 0);
      assert.deepEqual(status.tiers[0], view);
      assert.equal(await kycTierOfMe(world, user), 0);
    });

    it('takes a new submission after a rejection and can approve it', async () => {
      const user = await signIn(world);
      assert.equal(ok(await submitTier1(world, user, 'sandbox-fail')).status, 'rejected');
      assert.equal(ok(await submitTier1(world, user, 'sandbox-fail')).status, 'rejected');
      assert.deepEqual(ok(await submitTier1(world, user, 'sandbox-pass')), { tier: 1, status: 'approved' });
      const status = await getStatus(world, user);
      assert.equal(status.tier, 1);
      // The latest submission is the one shown: no reason left over from the rejections.
      assert.deepEqual(status.tiers[0], { tier: 1, status: 'approved' });
      assert.equal(await kycTierOfMe(world, user), 1);
      assert.deepEqual(
        (await submissions(world, user.userId, 1)).map((r) => r.status),
        ['rejected', 'rejected', 'approved'],
      );
    });

    it('refuses a submission of an approved tier 1 with 409 CONFLICT, whatever the token', async () => {
      const user = await userAtTier(world, 1);
      expectError(await submitTier1(world, user, 'sandbox-pass'), 409, 'CONFLICT');
      // A failing token must not turn an approved tier into a rejected one either.
      expectError(await submitTier1(world, user, 'sandbox-fail'), 409, 'CONFLICT');
      assert.equal((await getStatus(world, user)).tier, 1);
      assert.equal(await kycTierOfMe(world, user), 1);
      assert.equal((await submissions(world, user.userId)).length, 1);
    });

    it('refuses an unknown token with 400 at data.livenessToken and records nothing', async () => {
      const user = await signIn(world);
      expectValidationAt(await submitTier1(world, user, 'liv_never-issued-token'), 'data.livenessToken');
      assert.deepEqual(await getStatus(world, user), FRESH_STATUS);
      assert.equal((await submissions(world, user.userId)).length, 0);
      assert.deepEqual(await eventJobs(world, user.userId), []);
    });

    for (const [label, data] of [
      ['a missing token', {}],
      ['an empty token', { livenessToken: '' }],
      ['a token that is not a string', { livenessToken: 42 }],
    ] as const) {
      it(`refuses ${label} with 400 at data.livenessToken`, async () => {
        const user = await signIn(world);
        expectValidationAt(
          await post(world, 'submitKycTier1', data, { token: user.accessToken }),
          'data.livenessToken',
        );
        assert.equal((await submissions(world, user.userId)).length, 0);
      });
    }

    it('needs a bearer token', async () => {
      expectError(
        await post(world, 'submitKycTier1', { livenessToken: 'sandbox-pass' }),
        401,
        'UNAUTHENTICATED',
      );
    });

    it('approves exactly one of 10 concurrent sandbox-pass submissions; the others get 409', async () => {
      const user = await signIn(world);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => submitTier1(world, user, 'sandbox-pass')),
      );
      const approved = responses.filter((r) => r.status === 200);
      assert.equal(approved.length, 1, JSON.stringify(responses.map((r) => r.body)));
      assert.deepEqual(ok(approved[0]!), { tier: 1, status: 'approved' });
      for (const response of responses.filter((r) => r.status !== 200)) {
        expectError(response, 409, 'CONFLICT');
      }
      const rows = await submissions(world, user.userId);
      assert.deepEqual(
        rows.map((r) => [r.tier, r.status]),
        [[1, 'approved']],
      );
      assert.equal(await kycTierOfMe(world, user), 1);
      // One approval, one event: the losers published nothing.
      assert.deepEqual(
        (await eventJobs(world, user.userId)).map((e) => [e.type, e.tier]),
        [['kyc.tier_approved', 1]],
      );
    });

    it('never lets a concurrent rejection hide an approval of the same tier', async () => {
      // A rejection is not blocked by the one-open-submission index; if it is recorded after a
      // concurrent approval it must not become the tier's state (tier 0 shown, tier 2 refused, and
      // tier 1 refused for good since an approved row exists).
      for (let round = 0; round < 5; round += 1) {
        const user = await kycUser(world);
        const tokens = ['sandbox-fail', 'sandbox-pass', 'sandbox-fail', 'sandbox-fail', 'sandbox-fail'];
        const responses = await Promise.all(tokens.map((token) => submitTier1(world, user, token)));
        for (const response of responses) {
          if (response.status !== 200) expectError(response, 409, 'CONFLICT');
        }
        assert.equal(responses[1]?.status, 200, JSON.stringify(responses[1]?.body));
        const status = await getStatus(world, user);
        assert.deepEqual(status.tiers[0], { tier: 1, status: 'approved' }, `round ${round}`);
        assert.equal(status.tier, 1);
        assert.equal(await kycTierOfMe(world, user), 1);
        // The history reads as it happened: nothing was decided for tier 1 after its approval.
        const rows = await submissions(world, user.userId, 1);
        assert.equal(rows.at(-1)?.status, 'approved', JSON.stringify(rows.map((r) => r.status)));
        assert.equal(rows.filter((r) => r.status === 'approved').length, 1);
        // One event per recorded decision, and no more.
        assert.deepEqual(
          (await eventJobs(world, user.userId)).map((e) => e.type).sort(),
          rows.map((r) => `kyc.tier_${r.status}`).sort(),
        );
        assert.equal(ok(await submitTier2(world, user)).status, 'approved');
      }
    });
  });

  describe('tiers are strictly sequential', () => {
    it('refuses tier 2 before tier 1 with 422 KYC_PREVIOUS_TIER_REQUIRED (requiredTier 1)', async () => {
      const user = await kycUser(world);
      const error = expectError(await submitTier2(world, user), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
      assert.equal(error.details?.requiredTier, 1);
      assert.equal((await submissions(world, user.userId)).length, 0);
    });

    it('refuses tier 3 before tier 2 with 422 (requiredTier 2), with or without tier 1', async () => {
      const fresh = await kycUser(world);
      let error = expectError(await submitTier3(world, fresh), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
      assert.equal(error.details?.requiredTier, 2);
      const atTier1 = await userAtTier(world, 1);
      error = expectError(await submitTier3(world, atTier1), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
      assert.equal(error.details?.requiredTier, 2);
      assert.deepEqual(
        (await submissions(world, atTier1.userId)).map((r) => r.tier),
        [1],
      );
    });

    it('does not let a rejected tier 1 unlock tier 2', async () => {
      const user = await kycUser(world);
      assert.equal(ok(await submitTier1(world, user, 'sandbox-fail')).status, 'rejected');
      const error = expectError(await submitTier2(world, user), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
      assert.equal(error.details?.requiredTier, 1);
      assert.deepEqual(
        (await submissions(world, user.userId)).map((r) => r.tier),
        [1],
      );
    });

    it('does not let a pending tier 1 unlock tier 2', async () => {
      // Liveness is decided at once, so a pending tier 1 only exists if a provider ever answers
      // "in review": written here as such a submission would be.
      const user = await kycUser(world);
      await world.ctx.db
        .insertInto('kyc_submissions')
        .values({
          id: newId(),
          user_id: user.userId,
          tier: 1,
          status: 'pending',
          reason: null,
          details: '{}',
          document_id: null,
          created_at: world.ctx.clock.now(),
          decided_at: null,
          decided_by: null,
        })
        .execute();
      assert.deepEqual((await getStatus(world, user)).tiers[0], { tier: 1, status: 'pending' });
      const error = expectError(await submitTier2(world, user), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
      assert.equal(error.details?.requiredTier, 1);
      // Nor may tier 1 be submitted again while it waits.
      expectError(await submitTier1(world, user), 409, 'CONFLICT');
    });
  });

  describe('tier 2 (NIN and phone)', () => {
    it('needs a first and a last name on the profile (409 CONFLICT), then approves', async () => {
      const user = await userAtTier(world, 1, await kycUser(world, null));
      const nin = matchingNin();
      expectError(await submitTier2(world, user, { nin }), 409, 'CONFLICT');
      ok(await post(world, 'updateProfile', { firstName: 'Ngozi' }, { token: user.accessToken }));
      expectError(await submitTier2(world, user, { nin }), 409, 'CONFLICT');
      assert.equal((await submissions(world, user.userId, 2)).length, 0);
      ok(await post(world, 'updateProfile', { lastName: 'Eze' }, { token: user.accessToken }));
      assert.deepEqual(ok(await submitTier2(world, user, { nin })), { tier: 2, status: 'approved' });
    });

    it("accepts the account's phone in any shape (0803..., +234803..., 234803...)", async () => {
      for (const shape of [
        (local: string) => local,
        (local: string) => e164(local),
        (local: string) => e164(local).slice(1),
      ]) {
        const user = await userAtTier(world, 1);
        assert.deepEqual(ok(await submitTier2(world, user, { phone: shape(user.phone) })), {
          tier: 2,
          status: 'approved',
        });
        assert.equal(await kycTierOfMe(world, user), 2);
      }
    });

    it("refuses another phone than the account's with 400 at data.phone and records nothing", async () => {
      const user = await userAtTier(world, 1);
      const other = await signIn(world);
      expectValidationAt(await submitTier2(world, user, { phone: other.phone }), 'data.phone');
      expectValidationAt(await submitTier2(world, user, { phone: '12345' }), 'data.phone');
      assert.equal((await submissions(world, user.userId, 2)).length, 0);
      assert.equal(await kycTierOfMe(world, user), 1);
    });

    for (const nin of ['1234567890', '123456789012', '1234567890a', '', 12345678901]) {
      it(`refuses the NIN ${JSON.stringify(nin)} with 400 at data.nin`, async () => {
        const user = await userAtTier(world, 1);
        expectValidationAt(await submitTier2(world, user, { nin }), 'data.nin');
        assert.equal((await submissions(world, user.userId, 2)).length, 0);
      });
    }

    it('approves a matching NIN, keeps the NIN name and never the NIN in clear', async () => {
      const user = await userAtTier(
        world,
        1,
        await kycUser(world, { firstName: 'Chiamaka', lastName: 'Obi' }),
      );
      const nin = matchingNin();
      assert.deepEqual(ok(await submitTier2(world, user, { nin })), { tier: 2, status: 'approved' });
      assert.equal((await getStatus(world, user)).tier, 2);
      assert.equal(await kycTierOfMe(world, user), 2);
      const [row] = await submissions(world, user.userId, 2);
      assert.ok(row !== undefined);
      assert.equal(row.status, 'approved');
      assert.deepEqual(row.details.ninName, { firstName: 'Chiamaka', middleName: null, lastName: 'Obi' });
      assert.equal(row.details.ninLast4, nin.slice(-4));
      assert.match(String(row.nin_hash), /^[0-9a-f]{64}$/);
      assert.equal(row.details.ninHash, undefined, 'the hash is kept once, in its column');
      assert.ok(!row.detailsText.includes(nin), `the NIN is stored in clear: ${row.detailsText}`);
      assert.ok(!row.detailsText.includes(nin.slice(0, 7)), `a NIN prefix is stored: ${row.detailsText}`);
    });

    it('keys the NIN hash on the NIN: the same NIN gives the same hash, another NIN another', async () => {
      // NINs of someone else (rejected): an approved NIN cannot be submitted by a second account.
      const someoneElse = () => `9${matchingNin().slice(1)}`;
      const nin = someoneElse();
      const hashes: unknown[] = [];
      for (const n of [nin, nin, someoneElse()]) {
        const user = await userAtTier(world, 1);
        ok(await submitTier2(world, user, { nin: n }));
        hashes.push((await submissions(world, user.userId, 2))[0]?.nin_hash);
      }
      assert.equal(hashes[0], hashes[1]);
      assert.notEqual(hashes[0], hashes[2]);
    });

    it('rejects a NIN of someone else (starting with 9) with a reason about the name', async () => {
      const user = await userAtTier(world, 1);
      const view = ok(await submitTier2(world, user, { nin: '91234567890' }));
      assert.equal(view.status, 'rejected');
      assert.match(view.reason ?? '', /name/i);
      assert.deepEqual((await getStatus(world, user)).tiers[1], view);
      assert.equal(await kycTierOfMe(world, user), 1);
      // The reviewer sees whose NIN it was.
      const [row] = await submissions(world, user.userId, 2);
      assert.deepEqual(row?.details.ninName, {
        firstName: 'MUSA',
        middleName: 'IBRAHIM',
        lastName: 'DANJUMA',
      });
      assert.ok(!row?.detailsText.includes('91234567890'));
    });

    it("rejects 00000000000 with 'no NIN record'", async () => {
      const user = await userAtTier(world, 1);
      const view = ok(await submitTier2(world, user, { nin: '00000000000' }));
      assert.equal(view.status, 'rejected');
      assert.match(view.reason ?? '', /no NIN record/);
      assert.equal(await kycTierOfMe(world, user), 1);
      const [row] = await submissions(world, user.userId, 2);
      assert.equal(row?.details.ninName, undefined);
      assert.ok(!row?.detailsText.includes('00000000000'));
    });

    it('approves a matching NIN after rejections', async () => {
      const user = await userAtTier(world, 1);
      assert.equal(ok(await submitTier2(world, user, { nin: '00000000000' })).status, 'rejected');
      assert.equal(ok(await submitTier2(world, user, { nin: '98765432101' })).status, 'rejected');
      assert.deepEqual(ok(await submitTier2(world, user)), { tier: 2, status: 'approved' });
      assert.equal((await getStatus(world, user)).tier, 2);
      assert.equal(await kycTierOfMe(world, user), 2);
      expectError(await submitTier2(world, user), 409, 'CONFLICT');
      assert.deepEqual(
        (await submissions(world, user.userId, 2)).map((r) => r.status),
        ['rejected', 'rejected', 'approved'],
      );
    });

    // Precomposed letters only: updateProfile's name pattern (src/auth/schemas.ts) refuses combining
    // marks, such as the grave of "ọ̀", that have no precomposed form.
    it('carries a profile name with tone marks to the provider and back intact', async () => {
      const user = await userAtTier(
        world,
        1,
        await kycUser(world, { firstName: 'Adébáyọ', lastName: 'Ọlábísí' }),
      );
      assert.deepEqual(ok(await submitTier2(world, user)), { tier: 2, status: 'approved' });
      const [row] = await submissions(world, user.userId, 2);
      assert.deepEqual(row?.details.ninName, { firstName: 'Adébáyọ', middleName: null, lastName: 'Ọlábísí' });
    });

    describe('with a NIN record written as NIMC writes it', () => {
      // The sandbox echoes the names it is sent; a real record is in capitals, without tone marks,
      // and sometimes with first and last name swapped. The real sandbox call is made and its
      // answer rewritten, so the operation runs end to end over HTTP.
      // The look-up is replaced on the provider itself: the KYC module holds the provider it was
      // built with.
      let original: KycProvider['lookupNin'];
      before(() => {
        original = world.ctx.kyc.provider.lookupNin.bind(world.ctx.kyc.provider);
      });
      afterEach(() => {
        world.ctx.kyc.provider.lookupNin = original;
      });
      const recordAs = (
        rewrite: (r: { firstName: string; lastName: string }) => { firstName: string; lastName: string },
      ) => {
        world.ctx.kyc.provider.lookupNin = async (request) => {
          const answer = await original(request);
          if (!answer.found) return answer;
          return { found: true, record: { ...answer.record, ...rewrite(answer.record) } };
        };
      };

      it('matches a profile in mixed case with tone marks to a swapped, capitalised record', async () => {
        const user = await userAtTier(
          world,
          1,
          await kycUser(world, { firstName: 'adéBÁYỌ', lastName: 'Ògúnlésí' }),
        );
        recordAs(() => ({ firstName: 'OGUNLESI', lastName: 'ADEBAYO' }));
        assert.deepEqual(ok(await submitTier2(world, user)), { tier: 2, status: 'approved' });
        assert.deepEqual((await submissions(world, user.userId, 2))[0]?.details.ninName, {
          firstName: 'OGUNLESI',
          middleName: null,
          lastName: 'ADEBAYO',
        });
      });

      it('rejects a record one letter away from the profile name', async () => {
        const user = await userAtTier(
          world,
          1,
          await kycUser(world, { firstName: 'Chidi', lastName: 'Okafor' }),
        );
        recordAs(() => ({ firstName: 'CHIKA', lastName: 'OKAFOR' }));
        const view = ok(await submitTier2(world, user));
        assert.equal(view.status, 'rejected');
        assert.match(view.reason ?? '', /name/);
        assert.equal(await kycTierOfMe(world, user), 1);
      });
    });
  });
});
