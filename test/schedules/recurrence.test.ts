import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isVtpassRequestId } from '../../src/providers/vtu/vtpass-client.ts';
import { nextDueAfter, occurrence, runReference } from '../../src/schedules/recurrence.ts';
import { purchaseReference } from '../../src/vtu/purchases.ts';

// When a schedule's runs fall due (Africa/Lagos wall clock, UTC+1 all year) and the reference a run's
// purchase takes.

const lagos = (wall: string) => new Date(`${wall}+01:00`);

describe('due times', () => {
  it('a monthly schedule keeps its day, on the last day of a shorter month, and never drifts', () => {
    const start = lagos('2027-01-31T08:00:00');
    assert.deepEqual(
      [0, 1, 2, 3, 12, 13].map((k) => occurrence(start, 'month', k).toISOString()),
      [
        lagos('2027-01-31T08:00:00'),
        lagos('2027-02-28T08:00:00'),
        lagos('2027-03-31T08:00:00'),
        lagos('2027-04-30T08:00:00'),
        lagos('2028-01-31T08:00:00'),
        lagos('2028-02-29T08:00:00'),
      ].map((d) => d.toISOString()),
    );
  });

  it('a monthly run late in the Lagos evening stays on its Lagos date (23:30 Lagos is 22:30 UTC)', () => {
    const start = lagos('2027-03-31T23:30:00');
    assert.equal(occurrence(start, 'month', 1).toISOString(), lagos('2027-04-30T23:30:00').toISOString());
  });

  it('days and weeks are whole Lagos days', () => {
    const start = lagos('2027-06-01T07:15:00');
    assert.equal(occurrence(start, 'day', 30).toISOString(), lagos('2027-07-01T07:15:00').toISOString());
    assert.equal(occurrence(start, 'week', 2).toISOString(), lagos('2027-06-15T07:15:00').toISOString());
  });

  it('the next due time is after the run just made and after now: missed ones are not made up', () => {
    const start = lagos('2027-01-31T08:00:00');
    const feb = lagos('2027-02-28T08:00:00');
    assert.equal(nextDueAfter(start, 'month', start, start).toISOString(), feb.toISOString());
    // The service was down from February to May: the next after now is May's 31st.
    assert.equal(
      nextDueAfter(start, 'month', feb, lagos('2027-05-10T00:00:00')).toISOString(),
      lagos('2027-05-31T08:00:00').toISOString(),
    );
    assert.equal(
      nextDueAfter(start, 'day', start, lagos('2027-02-03T09:00:00')).toISOString(),
      lagos('2027-02-04T08:00:00').toISOString(),
    );
  });
});

describe('a run reference', () => {
  it('is a VTpass request_id dated when claimed, unique per schedule and due time, the same on every attempt', () => {
    const id = '0190f7a2-3b4c-7d5e-8f60-718293a4b5c6';
    const due = lagos('2027-01-31T08:00:00');
    const claimed = lagos('2027-02-02T10:41:30');
    const reference = runReference({ purchaseReference }, id, due, claimed);
    assert.ok(isVtpassRequestId(reference), reference);
    assert.equal(reference.slice(0, 12), '202702021041', 'dated the Lagos minute of the claim');
    assert.equal(runReference({ purchaseReference }, id, due, claimed), reference);
    assert.notEqual(
      runReference({ purchaseReference }, id, lagos('2027-02-28T08:00:00'), claimed),
      reference,
      'another due time',
    );
    assert.equal(reference.length, 50);
  });
});
