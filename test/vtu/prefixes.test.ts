import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { toE164 } from '../../src/phone.ts';
import { localPhone, networkOfPhone, operatorOfPhone } from '../../src/shared/prefixes.ts';

// The prefix map against its own copy of shared/reference/providers.md section 5, written out here
// rather than imported, so a slip in the code's table shows up as a difference.

const reference: [prefix: string, operator: string][] = [
  ...['0703', '0706', '0803', '0806', '0810', '0813', '0814', '0816', '0903', '0906', '0913', '0916'].map(
    (p) => [p, 'mtn'] as [string, string],
  ),
  ['07025', 'mtn'],
  ['07026', 'mtn'],
  ['0704', 'mtn'],
  ['0707', 'mtn'],
  ...['0701', '0708', '0802', '0808', '0812', '0901', '0902', '0904', '0907', '0911', '0912'].map(
    (p) => [p, 'airtel'] as [string, string],
  ),
  ...['0705', '0805', '0807', '0811', '0815', '0905', '0915'].map((p) => [p, 'glo'] as [string, string]),
  ...['0809', '0817', '0818', '0908', '0909'].map((p) => [p, '9mobile'] as [string, string]),
  ['0804', 'ntel'],
  ['0702', 'smile'],
  ['0801', 'mafab'],
  ['07027', 'multilinks'],
  ['0709', 'multilinks'],
  ['07028', 'starcomms'],
  ['07029', 'starcomms'],
  ['0819', 'starcomms'],
];
const sold = new Set(['mtn', 'glo', 'airtel', '9mobile']);

/** A local number with this prefix, padded to 11 digits with the given digit. */
const numberWith = (prefix: string, fill = '4') => prefix.padEnd(11, fill);

describe('Nigerian prefix map', () => {
  for (const [prefix, operator] of reference) {
    it(`${prefix} is ${operator}`, () => {
      // Fills that never make a 5-digit block out of a 4-digit prefix (07025...07029 are their own).
      for (const fill of ['0', '1', '3']) {
        const local = numberWith(prefix, fill);
        assert.equal(operatorOfPhone(local), operator, local);
        assert.equal(networkOfPhone(local), sold.has(operator) ? operator : 'other', local);
      }
    });
  }

  it('reads the 5-digit blocks before the 4-digit prefix they sit in', () => {
    // 0702 is Smile, except 07025/07026 (MTN, ex-Visafone), 07027 (Multi-Links), 07028/07029 (Starcomms).
    for (const fifth of ['0', '1', '2', '3', '4'])
      assert.equal(operatorOfPhone(numberWith(`0702${fifth}`)), 'smile');
    assert.equal(networkOfPhone('07025123456'), 'mtn');
    assert.equal(networkOfPhone('07026123456'), 'mtn');
    assert.equal(networkOfPhone('07027123456'), 'other');
    assert.equal(operatorOfPhone('07028123456'), 'starcomms');
    assert.equal(operatorOfPhone('07029123456'), 'starcomms');
    assert.equal(networkOfPhone('07021234567'), 'other');
  });

  it('reads every form toE164 takes', () => {
    for (const form of [
      '08031234567',
      '+2348031234567',
      '2348031234567',
      '0803 123 4567',
      '+234 803 123 4567',
      '0803-123-4567',
    ]) {
      assert.equal(networkOfPhone(form), 'mtn', form);
    }
    assert.equal(networkOfPhone('+2347025123456'), 'mtn');
    assert.equal(networkOfPhone('2349081234567'), '9mobile');
    assert.equal(networkOfPhone('0805 000 0000'), 'glo');
    assert.equal(networkOfPhone('+2349121234567'), 'airtel');
  });

  it('calls a well-formed number with a prefix in no list "other", not an error', () => {
    for (const local of ['07001234567', '07101234567', '08001234567', '09141234567', '09171234567']) {
      assert.equal(operatorOfPhone(local), 'unknown', local);
      assert.equal(networkOfPhone(local), 'other', local);
    }
  });

  it('answers null for what is not a Nigerian mobile number', () => {
    for (const text of [
      '',
      'not a phone',
      '0803123456', // 10 digits
      '080312345678', // 12 digits
      '+14155550123',
      '+4407911123456',
      '+2340803123456', // the 0 kept after +234
      '01234567890', // Lagos landline area code
      '06012345678', // not a mobile range
      '+234 812 345 67',
      '0803123456a',
      '(0803) 123 4567',
    ]) {
      assert.equal(networkOfPhone(text), null, text);
      assert.equal(operatorOfPhone(text), null, text);
    }
  });

  it('writes the local form vendors take', () => {
    assert.equal(localPhone('+2348031234567'), '08031234567');
    assert.equal(localPhone('2348031234567'), '08031234567');
    assert.equal(localPhone('0803 123 4567'), '08031234567');
    assert.throws(() => localPhone('+14155550123'), RangeError);
    assert.throws(() => localPhone(''), RangeError);
  });

  it('round-trips any valid local number through toE164 and localPhone', () => {
    const digit = fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9');
    const local = fc
      .tuple(
        fc.constantFrom('7', '8', '9'),
        fc.constantFrom('0', '1'),
        fc.array(digit, { minLength: 8, maxLength: 8 }),
      )
      .map(([first, second, rest]) => `0${first}${second}${rest.join('')}`);
    fc.assert(
      fc.property(local, (number) => {
        const e164 = toE164(number);
        assert.ok(e164 !== null, number);
        assert.equal(e164, `+234${number.slice(1)}`);
        assert.equal(localPhone(e164), number);
        assert.equal(localPhone(e164.slice(1)), number);
        assert.notEqual(networkOfPhone(number), null);
      }),
      { numRuns: 1000 },
    );
  });
});
