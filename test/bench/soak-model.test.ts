import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Session } from '../../bench/soak/client.ts';
import { debitedKobo, SOAK_LIMITS } from '../../bench/soak/limits.ts';
import {
  expectedBalanceKobo,
  koboOf,
  newModel,
  outcomeOfDigit,
  type Person,
} from '../../bench/soak/model.ts';

// The soak judges every wallet by its own reckoning; a wrong rule there would fail a sound service
// or pass a broken one. Pinned here: the sandbox's digit rule, naira to kobo without float drift,
// and a balance that charges each purchase once and gives back exactly the failed ones.

const session = (userId: string): Session => ({
  phone: '08030000000',
  userId,
  accessToken: '',
  refreshToken: '',
  refreshing: undefined,
});

const person = (userId: string, baseKobo: bigint): Person => ({
  session: session(userId),
  nin: '10000000000',
  baseKobo,
  lockedKobo: 0n,
  checkinKobo: 0n,
  transferredOutKobo: 0n,
  topups: 0,
});

describe('the soak model', () => {
  it('follows the sandbox: 1 and 3 fail, every other last digit succeeds', () => {
    assert.deepEqual(
      [...'0123456789'].map((d) => outcomeOfDigit(`0803123456${d}`)),
      [
        'success',
        'failed',
        'success',
        'failed',
        'success',
        'success',
        'success',
        'success',
        'success',
        'success',
      ],
    );
  });

  it('reads naira with two decimals as exact kobo', () => {
    assert.equal(koboOf(0.29), 29n);
    assert.equal(koboOf(1234.57), 123457n);
    assert.equal(koboOf(100), 10000n);
  });

  it('charges every purchase and refunds the failed ones, by the digit or, under a fault, as they ended', () => {
    const model = newModel();
    const buyer = person('u1', 100_000n);
    const other = person('u2', 5_000n);
    model.people.push(buyer, other);
    const purchase = (
      id: string,
      userId: string,
      recipient: string,
      expected: 'success' | 'failed' | null,
    ) => ({
      userId,
      id,
      reference: undefined,
      service: 'airtime',
      recipient,
      chargedKobo: 1_000n,
      expected,
      via: 'direct' as const,
      acceptedAt: 0,
    });
    model.purchases.push(
      purchase('a', 'u1', '08031234565', 'success'),
      purchase('b', 'u1', '08031234561', 'failed'),
      purchase('c', 'u1', '08031234565', null),
      purchase('d', 'u1', '08031234565', null),
      purchase('e', 'u2', '08031234565', 'success'),
    );
    model.schedules.push(
      { userId: 'u1', id: 's1', recipient: '08031234563', chargedKobo: 700n, expected: 'failed' },
      { userId: 'u1', id: 's2', recipient: '08031234567', chargedKobo: 300n, expected: 'success' },
      { userId: 'u1', id: 's3', recipient: '08031234568', chargedKobo: 200n, expected: null },
    );
    const ended = new Map([
      ['c', 'failed'],
      ['d', 'success'],
      ['to:08031234568', 'failed'],
    ]);
    // a, d and the second schedule are paid for; b, c, the first and the third schedule are given back.
    assert.equal(expectedBalanceKobo(model, buyer, ended), 100_000n - 1_000n - 1_000n - 300n);
    assert.equal(expectedBalanceKobo(model, other, ended), 4_000n);
  });

  it('charges nothing for a schedule whose one run the service skipped for want of funds', () => {
    const model = newModel();
    const buyer = person('u1', 10_000n);
    model.people.push(buyer);
    model.schedules.push(
      { userId: 'u1', id: 's1', recipient: '08031234565', chargedKobo: 400n, expected: 'success' },
      { userId: 'u1', id: 's2', recipient: '08031234567', chargedKobo: 300n, expected: 'success' },
    );
    assert.equal(expectedBalanceKobo(model, buyer, new Map()), 10_000n - 400n - 300n);
    model.schedules[0]!.skipped = true;
    assert.equal(expectedBalanceKobo(model, buyer, new Map()), 10_000n - 300n);
  });

  it('reckons what left a person today as the daily debit limit counts it: kept purchases and runs, and transfers sent', () => {
    const model = newModel();
    const buyer = { ...person('u1', 100_000n), transferredOutKobo: 2_500n };
    model.people.push(buyer, person('u2', 0n));
    const purchase = (id: string, userId: string, expected: 'success' | 'failed' | null) => ({
      userId,
      id,
      reference: undefined,
      service: 'airtime',
      recipient: '08031234565',
      chargedKobo: 1_000n,
      expected,
      via: 'bulk' as const,
      acceptedAt: 0,
    });
    model.purchases.push(
      purchase('a', 'u1', 'success'),
      purchase('b', 'u1', 'failed'),
      purchase('c', 'u1', null),
      purchase('d', 'u1', null),
      purchase('e', 'u2', 'success'),
    );
    model.schedules.push(
      { userId: 'u1', id: 's1', recipient: '08031234563', chargedKobo: 700n, expected: 'failed' },
      { userId: 'u1', id: 's2', recipient: '08031234567', chargedKobo: 300n, expected: 'success' },
      {
        userId: 'u1',
        id: 's3',
        recipient: '08031234568',
        chargedKobo: 200n,
        expected: 'success',
        skipped: true,
      },
    );
    const ended = new Map([
      ['c', 'failed'],
      ['d', 'success'],
    ]);
    // a, d and the second schedule's run stay debited; a failed one's refund gave its room back;
    // the skipped run debited nothing; the transfers sent count.
    assert.equal(debitedKobo(model, buyer, ended), 1_000n + 1_000n + 300n + 2_500n);
  });

  it('runs the service under limits that still judge (figures, not none) for Tier 1 and Tier 2 alike', () => {
    assert.equal(SOAK_LIMITS.LIMIT_TIER2_DAILY, SOAK_LIMITS.LIMIT_TIER1_DAILY);
    assert.equal(SOAK_LIMITS.LIMIT_TIER2_BALANCE, SOAK_LIMITS.LIMIT_TIER1_BALANCE);
    for (const figure of Object.values(SOAK_LIMITS)) assert.match(figure, /^\d+$/);
  });
});
