import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readAmount, readLines } from '../../web/src/payments/pasted-lines.ts';

// A bulk order's pasted rows (web/src/payments/pasted-lines.ts): the phone is split off first, so a
// comma in the amount is a thousands separator. Split on every comma, "08031234567, 1,500" was read
// as ₦1.

describe('a bulk order’s pasted lines', () => {
  it('reads amounts with thousands separators, spaces and ₦ as the whole amount', () => {
    const text = [
      '08031234567, 1,500',
      '08031234568 ₦1,500',
      '08031234569;  ₦ 2,000.50 ',
      '08031234570\t1 500',
      '08031234571,1500',
      '08031234572 NGN 12,345,678',
      '+2348031234573 500',
    ].join('\n');
    const { lines, unreadable } = readLines(text, true);
    assert.deepEqual(unreadable, []);
    assert.deepEqual(
      lines.map((line) => [line.phone, line.amount]),
      [
        ['08031234567', 1500],
        ['08031234568', 1500],
        ['08031234569', 2000.5],
        ['08031234570', 1500],
        ['08031234571', 1500],
        ['08031234572', 12_345_678],
        ['+2348031234573', 500],
      ],
    );
    assert.ok(lines.every((line) => line.network === 'mtn'));
  });

  it('reports by number the rows it cannot read, and skips blank ones', () => {
    const text = [
      '08031234567, 1,50', // a group of two digits is no thousands separator
      '',
      '08031234568, 500, 600', // two amounts: neither is guessed
      '0803123456, 500', // ten digits: no phone
      '08031234569',
      '08031234570, ₦0',
      '08031234571, 1.505',
      '   ',
      '08031234572 ₦1,000',
    ].join('\r\n');
    const { lines, unreadable } = readLines(text, true);
    assert.deepEqual(unreadable, [1, 3, 4, 5, 6, 7]);
    assert.deepEqual(
      lines.map((line) => [line.phone, line.amount]),
      [['08031234572', 1000]],
    );
  });

  it('needs no amount for data, whatever follows the phone', () => {
    const { lines, unreadable } = readLines('08031234567\n08051234567, 1,500\n09012345678 x', false);
    assert.deepEqual(unreadable, []);
    assert.deepEqual(
      lines.map((line) => [line.phone, line.amount, line.network]),
      [
        ['08031234567', 0, 'mtn'],
        ['08051234567', 0, 'glo'],
        ['09012345678', 0, 'airtel'],
      ],
    );
  });

  it('reads an amount alone', () => {
    assert.equal(readAmount('1,500'), 1500);
    assert.equal(readAmount('₦1,500.5'), 1500.5);
    assert.equal(readAmount('1,5000'), null);
    assert.equal(readAmount('one'), null);
    assert.equal(readAmount(''), null);
  });
});
