import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePgbenchOutput } from '../../bench/pgbench.ts';

// The bench compares the service with `pgbench -N`; a misread pgbench figure would make every
// comparison wrong, so the parser is pinned to pgbench's real output (PostgreSQL 15 and 17 shapes).

describe('parsePgbenchOutput', () => {
  it('reads tps and average latency from PostgreSQL 15 output', () => {
    const output = [
      'transaction type: <builtin: simple update>',
      'scaling factor: 10',
      'number of clients: 50',
      'number of threads: 2',
      'duration: 10 s',
      'number of transactions actually processed: 41234',
      'latency average = 12.127 ms',
      'initial connection time = 35.123 ms',
      'tps = 4123.456789 (without initial connection time)',
    ].join('\n');
    assert.deepEqual(parsePgbenchOutput(output), {
      tps: 4123.456789,
      latencyAverageMs: 12.127,
      transactions: 41234,
    });
  });

  it('accepts the "excluding" wording of older releases', () => {
    assert.equal(parsePgbenchOutput('tps = 99.5 (excluding initial connection time)').tps, 99.5);
  });

  it('refuses output without a tps line', () => {
    assert.throws(() => parsePgbenchOutput('pgbench: error: connection refused'), /no tps line/);
  });
});
