import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { e164 } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import {
  eventJobs,
  expectError,
  expectValidationAt,
  getStatus,
  kycTierOfMe,
  kycUser,
  pdfDocument,
  submissions,
  submitTier3,
  type TierView,
  userAtTier,
} from './kyc-support.ts';

// The tier 3 review queue (API.md section 11): adminListKycReviews and adminReviewKyc are for admins
// only (ADMIN_PHONES); pending submissions are listed oldest first with what the reviewer needs; an
// approval moves the user to tier 3, a rejection needs a reason and lets the user try again; a
// submission is decided once, also when two admins decide it at the same time.

type Review = {
  submissionId: string;
  userId: string;
  phone: string;
  firstName: string | null;
  lastName: string | null;
  tier: number;
  status: string;
  reason: string | null;
  details: Record<string, unknown>;
  documentId: string | null;
  createdAt: string;
  decidedAt: string | null;
};
type ReviewPage = { items: Review[]; limit: number; offset: number; total: number };

/** A world whose ADMIN_PHONES holds one phone, and that admin signed in. */
async function adminWorld(): Promise<{ world: World; admin: SignedIn }> {
  const adminPhone = uniquePhone();
  const world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  const admin = await signIn(world, adminPhone);
  const me = ok(await get<{ roles: string[] }>(world, 'getMe', {}, { token: admin.accessToken }));
  assert.ok(me.roles.includes('admin'));
  return { world, admin };
}

const listReviews = (world: World, admin: SignedIn, query: Record<string, unknown> = {}) =>
  get<ReviewPage>(world, 'adminListKycReviews', query, { token: admin.accessToken });

const review = (world: World, admin: SignedIn, data: Record<string, unknown>) =>
  post<TierView>(world, 'adminReviewKyc', data, { token: admin.accessToken });

/** A user at tier 2 whose tier 3 waits for review. */
async function pendingTier3(
  world: World,
  names = { firstName: 'Adebayo', lastName: 'Ogunlesi' },
): Promise<{ user: SignedIn; documentId: string }> {
  const user = await userAtTier(world, 2, await kycUser(world, names));
  const view = ok(await submitTier3(world, user));
  assert.equal(view.status, 'pending');
  return { user, documentId: view.documentId! };
}

describe(`KYC admin review (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  describe('access', () => {
    let world: World;
    let admin: SignedIn;
    before(async () => {
      ({ world, admin } = await adminWorld());
    });
    after(() => world.close());

    it('refuses a non-admin with 403 FORBIDDEN and no token with 401, and changes nothing', async () => {
      const { user } = await pendingTier3(world);
      const decision = { userId: user.userId, tier: 3, decision: 'approve' };
      expectError(await listReviews(world, user), 403, 'FORBIDDEN');
      expectError(await review(world, user, decision), 403, 'FORBIDDEN');
      expectError(await get(world, 'adminListKycReviews'), 401, 'UNAUTHENTICATED');
      expectError(await post(world, 'adminReviewKyc', decision), 401, 'UNAUTHENTICATED');
      assert.equal((await getStatus(world, user)).tiers[2]?.status, 'pending');
      assert.equal(await kycTierOfMe(world, user), 2);
      // The admin's own list still shows it.
      assert.ok(ok(await listReviews(world, admin)).items.some((i) => i.userId === user.userId));
    });
  });

  describe('the review queue', () => {
    let world: World;
    let admin: SignedIn;
    let a: { user: SignedIn; documentId: string };
    let b: { user: SignedIn; documentId: string };
    let c: { user: SignedIn; documentId: string };
    before(async () => {
      ({ world, admin } = await adminWorld());
      // Three submissions a second apart on the service clock, so arrival order is unambiguous.
      a = await pendingTier3(world, { firstName: 'Amaka', lastName: 'Nwosu' });
      world.ctx.sandboxClock!.advance(1);
      b = await pendingTier3(world, { firstName: 'Bello', lastName: 'Sani' });
      world.ctx.sandboxClock!.advance(1);
      c = await pendingTier3(world, { firstName: 'Chidi', lastName: 'Eze' });
    });
    after(() => world.close());

    it('lists pending tier 3 submissions oldest first with who, what was checked and the document', async () => {
      const page = ok(await listReviews(world, admin));
      assert.deepEqual([page.limit, page.offset, page.total], [20, 0, 3]);
      assert.deepEqual(
        page.items.map((i) => i.userId),
        [a.user.userId, b.user.userId, c.user.userId],
      );
      const first = page.items[0]!;
      assert.equal(first.phone, e164(a.user.phone));
      assert.deepEqual([first.firstName, first.lastName], ['Amaka', 'Nwosu']);
      assert.deepEqual([first.tier, first.status, first.reason, first.decidedAt], [3, 'pending', null, null]);
      assert.equal(first.documentId, a.documentId);
      assert.equal(first.details.accountName, 'NWOSU AMAKA');
      assert.equal(first.submissionId, (await submissions(world, a.user.userId, 3))[0]?.id);
      assert.ok(Date.parse(page.items[0]!.createdAt) < Date.parse(page.items[1]!.createdAt));
      assert.ok(Date.parse(page.items[1]!.createdAt) < Date.parse(page.items[2]!.createdAt));
    });

    it('pages with limit and offset, with the total of all matching', async () => {
      const middle = ok(await listReviews(world, admin, { limit: 2, offset: 1 }));
      assert.deepEqual([middle.limit, middle.offset, middle.total], [2, 1, 3]);
      assert.deepEqual(
        middle.items.map((i) => i.userId),
        [b.user.userId, c.user.userId],
      );
      const head = ok(await listReviews(world, admin, { status: 'pending', limit: 2, offset: 0 }));
      assert.deepEqual(
        head.items.map((i) => i.userId),
        [a.user.userId, b.user.userId],
      );
      const past = ok(await listReviews(world, admin, { limit: 2, offset: 3 }));
      assert.deepEqual([past.items, past.total], [[], 3]);
      for (const query of [
        { limit: 0 },
        { limit: 101 },
        { offset: -1 },
        { status: 'waiting' },
        { tier: 3 },
      ]) {
        expectError(await listReviews(world, admin, query), 400, 'VALIDATION_ERROR');
      }
    });

    it('refuses a rejection without a reason with 400 at data.reason', async () => {
      for (const data of [
        { userId: b.user.userId, tier: 3, decision: 'reject' },
        { userId: b.user.userId, tier: 3, decision: 'reject', reason: '   ' },
      ]) {
        expectValidationAt(await review(world, admin, data), 'data.reason');
      }
      assert.equal((await getStatus(world, b.user)).tiers[2]?.status, 'pending');
    });

    it('approves: the user is at tier 3, and the approval is listed as such', async () => {
      const view = ok(await review(world, admin, { userId: a.user.userId, tier: 3, decision: 'approve' }));
      assert.deepEqual(view, { tier: 3, status: 'approved', documentId: a.documentId });
      const status = await getStatus(world, a.user);
      assert.equal(status.tier, 3);
      assert.deepEqual(status.tiers[2], view);
      assert.equal(await kycTierOfMe(world, a.user), 3);
      const [row] = await submissions(world, a.user.userId, 3);
      assert.equal(row?.decided_by, admin.userId);
      assert.deepEqual(
        (await eventJobs(world, a.user.userId)).map((e) => [e.type, e.tier]),
        [
          ['kyc.tier_approved', 1],
          ['kyc.tier_approved', 2],
          ['kyc.tier_approved', 3],
        ],
      );

      const pending = ok(await listReviews(world, admin));
      assert.deepEqual(
        pending.items.map((i) => i.userId),
        [b.user.userId, c.user.userId],
      );
      const approved = ok(await listReviews(world, admin, { status: 'approved', limit: 100 }));
      assert.ok(approved.items.every((i) => i.status === 'approved'));
      const tier3 = approved.items.filter((i) => i.tier === 3);
      assert.deepEqual(
        tier3.map((i) => [i.userId, i.documentId]),
        [[a.user.userId, a.documentId]],
      );
      assert.ok(tier3[0]?.decidedAt !== null);
      assert.equal(approved.total, approved.items.length);
    });

    it('rejects with a reason the user sees; the user may submit tier 3 again', async () => {
      const reason = 'The passport photo page is unreadable; please upload a sharper scan.';
      const view = ok(
        await review(world, admin, { userId: b.user.userId, tier: 3, decision: 'reject', reason }),
      );
      assert.deepEqual(view, { tier: 3, status: 'rejected', reason, documentId: b.documentId });
      const status = await getStatus(world, b.user);
      assert.equal(status.tier, 2);
      assert.deepEqual(status.tiers[2], view);
      assert.equal(await kycTierOfMe(world, b.user), 2);
      const event = (await eventJobs(world, b.user.userId)).at(-1);
      assert.deepEqual([event?.type, event?.tier, event?.reason], ['kyc.tier_rejected', 3, reason]);

      const rejected = ok(await listReviews(world, admin, { status: 'rejected' }));
      assert.deepEqual(
        rejected.items.map((i) => [i.userId, i.tier, i.reason]),
        [[b.user.userId, 3, reason]],
      );

      const again = ok(await submitTier3(world, b.user));
      assert.equal(again.status, 'pending');
      assert.notEqual(again.documentId, b.documentId);
      assert.deepEqual((await getStatus(world, b.user)).tiers[2], again);
      const pending = ok(await listReviews(world, admin));
      assert.deepEqual(
        pending.items.map((i) => [i.userId, i.documentId]),
        [
          [c.user.userId, c.documentId],
          [b.user.userId, again.documentId],
        ],
      );
    });

    it('answers 409 CONFLICT for a tier already decided, and changes nothing', async () => {
      // A tier rejected with no newer submission waiting is decided too.
      const rejected = await pendingTier3(world, { firstName: 'Dayo', lastName: 'Ade' });
      ok(
        await review(world, admin, {
          userId: rejected.user.userId,
          tier: 3,
          decision: 'reject',
          reason: 'blurred',
        }),
      );
      const eventsBefore = (await eventJobs(world, rejected.user.userId)).length;
      for (const data of [
        { userId: a.user.userId, tier: 3, decision: 'approve' }, // already approved
        { userId: a.user.userId, tier: 3, decision: 'reject', reason: 'too late' },
        { userId: c.user.userId, tier: 2, decision: 'reject', reason: 'tier 2 is decided' },
        { userId: c.user.userId, tier: 1, decision: 'approve' },
        { userId: rejected.user.userId, tier: 3, decision: 'approve' },
      ]) {
        const error = expectError(await review(world, admin, data), 409, 'CONFLICT');
        assert.match(error.message, /already (approved|rejected)/);
      }
      assert.equal(await kycTierOfMe(world, a.user), 3);
      assert.equal(await kycTierOfMe(world, c.user), 2);
      assert.equal((await getStatus(world, c.user)).tiers[1]?.status, 'approved');
      assert.equal(await kycTierOfMe(world, rejected.user), 2);
      assert.equal((await getStatus(world, rejected.user)).tiers[2]?.status, 'rejected');
      assert.equal((await submissions(world, rejected.user.userId, 3)).length, 1);
      assert.equal((await eventJobs(world, rejected.user.userId)).length, eventsBefore);
    });

    it('answers 404 for an unknown user and for a tier never submitted', async () => {
      const atTier1 = await userAtTier(world, 1);
      for (const data of [
        { userId: randomUUID(), tier: 3, decision: 'approve' },
        { userId: atTier1.userId, tier: 2, decision: 'approve' },
        { userId: atTier1.userId, tier: 3, decision: 'reject', reason: 'never sent' },
      ]) {
        expectError(await review(world, admin, data), 404, 'NOT_FOUND');
      }
      assert.equal(await kycTierOfMe(world, atTier1), 1);
    });

    it("gives an admin a signed URL to any user's document", async () => {
      const { user, documentId } = await pendingTier3(world);
      const bytes = pdfDocument();
      // The document of a user who is not the admin, uploaded as a PDF so the type is checked too.
      const other = await userAtTier(world, 2);
      const upload = ok(
        await submitTier3(world, other, {
          documentBase64: bytes.toString('base64'),
          documentMimeType: 'application/pdf',
        }),
      );
      for (const [id, expected] of [
        [documentId, undefined],
        [upload.documentId!, bytes],
      ] as const) {
        const { url } = ok(
          await post<{ url: string }>(
            world,
            'getKycDocumentUrl',
            { documentId: id },
            { token: admin.accessToken },
          ),
        );
        const response = await fetch(url);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('cache-control'), 'private, no-store');
        if (expected !== undefined) {
          assert.equal(response.headers.get('content-type'), 'application/pdf');
          assert.ok(Buffer.from(await response.arrayBuffer()).equals(expected));
        }
      }
      // The owner of one document still cannot see the other's.
      expectError(
        await post(
          world,
          'getKycDocumentUrl',
          { documentId: upload.documentId },
          { token: user.accessToken },
        ),
        404,
        'NOT_FOUND',
      );
    });

    it('decides a submission once when two admins decide it at the same time', async () => {
      // The same admin on a second device: another session.
      const second = await signInAgain(world, admin.phone);
      const { user } = await pendingTier3(world);
      const responses = await Promise.all([
        review(world, admin, { userId: user.userId, tier: 3, decision: 'approve' }),
        review(world, second, { userId: user.userId, tier: 3, decision: 'reject', reason: 'blurred' }),
      ]);
      const winners = responses.filter((r) => r.status === 200);
      assert.equal(winners.length, 1, JSON.stringify(responses.map((r) => r.body)));
      for (const loser of responses.filter((r) => r.status !== 200)) expectError(loser, 409, 'CONFLICT');
      const decided = ok(winners[0]!);
      const rows = await submissions(world, user.userId, 3);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]?.status, decided.status);
      assert.equal(await kycTierOfMe(world, user), decided.status === 'approved' ? 3 : 2);
      // One decision, one event.
      assert.equal((await eventJobs(world, user.userId)).filter((e) => e.tier === 3).length, 1);
    });

    it('decides a submission once when the same decision is sent twice at the same time', async () => {
      const { user } = await pendingTier3(world);
      const decision = { userId: user.userId, tier: 3, decision: 'approve' };
      const responses = await Promise.all([review(world, admin, decision), review(world, admin, decision)]);
      assert.deepEqual(responses.map((r) => r.status).sort(), [200, 409]);
      assert.equal(await kycTierOfMe(world, user), 3);
      assert.equal((await eventJobs(world, user.userId)).filter((e) => e.tier === 3).length, 1);
    });
  });
});
