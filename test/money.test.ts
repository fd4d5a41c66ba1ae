import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isNairaAmount, koboToNaira, nairaKoboMax, nairaToKobo } from '../src/money.ts';

// Naira numbers exist only at the API edge. These tests pin down which numbers are amounts, that
// the conversion never goes through float arithmetic, and that an amount a JSON number cannot carry
// exactly is refused instead of silently becoming another amount.

describe('money: naira <-> kobo', () => {
  it('converts the everyday amounts exactly', () => {
    assert.equal(nairaToKobo(0), 0n);
    assert.equal(nairaToKobo(0.1), 10n);
    assert.equal(nairaToKobo(0.01), 1n);
    assert.equal(nairaToKobo(0.3), 30n);
    assert.equal(nairaToKobo(1), 100n);
    assert.equal(nairaToKobo(1234.5), 123450n);
    assert.equal(nairaToKobo(1234.56), 123456n);
    // 1.15 * 100 is 114.99999999999999 in float arithmetic; the string route gives 115.
    assert.equal(nairaToKobo(1.15), 115n);
    assert.equal(nairaToKobo(4.35), 435n);
    assert.equal(nairaToKobo(-0), 0n);

    assert.equal(koboToNaira(0n), 0);
    assert.equal(koboToNaira(1n), 0.01);
    assert.equal(koboToNaira(10n), 0.1);
    assert.equal(koboToNaira(123456n), 1234.56);
    assert.equal(koboToNaira(115n), 1.15);
    assert.equal(koboToNaira(-5n), -0.05);
    assert.equal(koboToNaira(-150n), -1.5);
  });

  it('accepts only non-negative amounts with at most two decimals', () => {
    for (const n of [0, 0.1, 0.01, 1, 1234.56, 9_999_999_999_999.99]) {
      assert.equal(isNairaAmount(n), true, `${n} is an amount`);
    }
    const refused = [
      -1,
      -0.01,
      1.234,
      0.001,
      0.1 + 0.2, // 0.30000000000000004
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      1e21, // String(1e21) is '1e+21'
      1.5e300,
      1e-7, // String(1e-7) is '1e-7'
    ];
    for (const n of refused) {
      assert.equal(isNairaAmount(n), false, `${n} is not an amount`);
      assert.throws(() => nairaToKobo(n), assert.AssertionError, `nairaToKobo(${n}) must refuse`);
    }
  });

  it('refuses amounts a JSON number cannot carry to the kobo', () => {
    // 90071992547409.99 and 90071992547409.98 parse to the same double: a client sending the first
    // would otherwise be charged the second. Everything above nairaKoboMax is refused at the edge.
    const sent: number = JSON.parse('90071992547409.99');
    assert.equal(sent, JSON.parse('90071992547409.98'));
    for (const n of [sent, 1e20, 10_000_000_000_000, Number.MAX_SAFE_INTEGER]) {
      assert.equal(isNairaAmount(n), false, `${n} is beyond the exact range`);
      assert.throws(() => nairaToKobo(n), assert.AssertionError);
    }
    assert.equal(nairaToKobo(9_999_999_999_999.99), nairaKoboMax);
    assert.equal(nairaKoboMax, 999_999_999_999_999n);
  });

  it('refuses to show a kobo amount above the exact range as a number rather than show another amount', () => {
    // 2^53 + 1 kobo as a naira number would read back as 9007199254740994 kobo.
    for (const kobo of [nairaKoboMax + 1n, 2n ** 53n + 1n, 2n ** 60n, -(2n ** 60n)]) {
      assert.throws(() => koboToNaira(kobo), assert.AssertionError, `${kobo} kobo`);
    }
    assert.equal(koboToNaira(nairaKoboMax), 9_999_999_999_999.99);
    assert.equal(koboToNaira(-nairaKoboMax), -9_999_999_999_999.99);
  });

  it('keeps kobo above 2^53 exact as bigint: the arithmetic never passes through a number', () => {
    const big = 2n ** 53n + 1n;
    assert.notEqual(BigInt(Number(big)), big, 'a number cannot hold 2^53 + 1');
    // The largest naira amount times a thousand postings is still exact in kobo.
    const total = nairaToKobo(9_999_999_999_999.99) * 1000n + 1n;
    assert.equal(total, 999_999_999_999_999_001n);
    assert.equal(total - nairaKoboMax * 1000n, 1n);
    assert.equal(typeof nairaToKobo(1234.56), 'bigint');
  });

  it('round-trips every kobo amount in range, and every naira amount with two decimals', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: nairaKoboMax }), (kobo) => {
        const naira = koboToNaira(kobo);
        assert.equal(isNairaAmount(naira), true);
        assert.equal(nairaToKobo(naira), kobo);
        assert.equal(koboToNaira(-kobo), kobo === 0n ? 0 : -naira);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 99_999_999_999n }),
        fc.integer({ min: 0, max: 99 }),
        (whole, cents) => {
          const text = `${whole}.${String(cents).padStart(2, '0')}`;
          assert.equal(nairaToKobo(Number(text)), whole * 100n + BigInt(cents));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
