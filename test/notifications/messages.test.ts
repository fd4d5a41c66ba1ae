import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageFor } from '../../src/notifications/messages.ts';

// How the inbox, push and email word events a person reads: service names as they are written in a
// sentence, and days as a Lagos calendar reads them.

const base = { userId: '0193b5d6-0000-7000-8000-000000000001', occurredAt: '2026-11-26T10:00:00.000Z' };

describe('notification wording', () => {
  it('keeps a service name’s own capitals inside a sentence', () => {
    const purchase = (service: string) =>
      messageFor({
        ...base,
        type: 'vtu.purchase_succeeded',
        transactionId: '0193b5d6-0000-7000-8000-000000000002',
        reference: 'REF1',
        service,
        amountKobo: '500000',
      })?.body;
    assert.match(purchase('cable') ?? '', /^Your cable TV purchase of ₦5,000\.00 succeeded/);
    assert.match(purchase('education') ?? '', /^Your exam pin purchase of /);
    assert.match(purchase('airtime') ?? '', /^Your airtime purchase of /);
  });

  it('names the day a lock matures as Lagos counts it, in words', () => {
    const locked = (maturesAt: string) =>
      messageFor({
        ...base,
        type: 'savings.lock_created',
        lockId: '0193b5d6-0000-7000-8000-000000000003',
        amountKobo: '100000',
        days: 30,
        maturesAt,
      })?.body;
    // 23:30 UTC is already the next day in Lagos (UTC+1).
    assert.equal(
      locked('2026-12-25T23:30:00.000Z'),
      '₦1,000.00 is locked for 30 days, until 26 December 2026.',
    );
    assert.equal(
      locked('2026-12-25T12:00:00.000Z'),
      '₦1,000.00 is locked for 30 days, until 25 December 2026.',
    );
  });
});
