import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { lagosMinute } from '../../src/lagos-time.ts';
import { isVtpassRequestId } from '../../src/providers/vtu/vtpass-client.ts';
import { newPurchaseReference, purchaseReference } from '../../src/vtu/purchases.ts';

// Purchase references are the purchase domain's (src/vtu/purchases.ts), made in the one form every
// provider takes: VTpass's request id, the narrowest. Each reference made here must pass the VTpass
// client's own check (isVtpassRequestId), which refuses a purchase before sending it otherwise.

const fixedNow = new Date('2026-01-01T23:30:00Z');

describe('purchase references', () => {
  it('prefix the Lagos minute, not the UTC one, also across midnight and a year end', () => {
    assert.equal(purchaseReference(fixedNow, 'abc123'), '202601020030abc123');
    assert.equal(purchaseReference(new Date('2026-06-15T10:05:59Z'), 'x'), '202606151105x');
  });

  it('move to the next minute on the minute, and back when the clock is set back', () => {
    // The minute is formatted once per minute (lagosMinute): each call must still read its own clock.
    assert.equal(purchaseReference(new Date('2026-06-15T10:05:00.000Z'), 'x'), '202606151105x');
    assert.equal(purchaseReference(new Date('2026-06-15T10:05:59.999Z'), 'x'), '202606151105x');
    assert.equal(purchaseReference(new Date('2026-06-15T10:06:00.000Z'), 'x'), '202606151106x');
    assert.equal(purchaseReference(fixedNow, 'x'), '202601020030x');
  });

  it('refuse a suffix that a provider would not take', () => {
    assert.throws(() => purchaseReference(fixedNow, ''), RangeError);
    assert.throws(() => purchaseReference(fixedNow, 'vtu_1'), RangeError);
    assert.throws(() => purchaseReference(fixedNow, 'a'.repeat(39)), RangeError);
    assert.equal(isVtpassRequestId(purchaseReference(fixedNow, 'a'.repeat(38))), true, 'the longest suffix');
  });

  it("a new purchase's reference: the Lagos minute, then 20 random hex digits, unique", () => {
    const made = newPurchaseReference(fixedNow);
    assert.match(made, /^202601020030[0-9a-f]{20}$/);
    const many = new Set(Array.from({ length: 1_000 }, () => newPurchaseReference(fixedNow)));
    assert.equal(many.size, 1_000);
  });

  it('every reference made, at any instant, is accepted by the VTpass client as a request id', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2099-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        (at) => {
          const made = newPurchaseReference(at);
          assert.ok(isVtpassRequestId(made), made);
          assert.ok(made.startsWith(lagosMinute(at)));
        },
      ),
      { numRuns: 2_000 },
    );
    // Around the turn of a year in Lagos, an hour ahead of UTC.
    for (const at of ['2026-12-31T22:59:59.999Z', '2026-12-31T23:00:00Z', '2028-02-28T23:30:00Z']) {
      assert.ok(isVtpassRequestId(newPurchaseReference(new Date(at))), at);
    }
    assert.equal(purchaseReference(new Date('2028-02-28T23:30:00Z'), 'x'), '202802290030x', 'a leap day');
  });
});
