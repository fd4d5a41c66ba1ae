import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';

// Which database errors are the service's outage (503) and which stay bugs (500): the words and
// codes node-postgres and PostgreSQL use for each.

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it('says yes to a connection that broke, was refused or timed out, and to a server going away', () => {
    for (const error of [
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      new Error('Client has encountered a connection error and is not queryable'),
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('read ECONNRESET', 'ECONNRESET'),
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('sorry, too many clients already', '53300'),
      withCode('connection failure', '08006'),
      new Error('a transaction failed', { cause: new Error('Connection terminated unexpectedly') }),
      new AggregateError([withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], 'connect failed'),
    ]) {
      assert.equal(isDatabaseUnavailable(error), true, error.message);
    }
  });

  it("says no to a statement the database refused, and to anything that is not the database's", () => {
    for (const error of [
      withCode('duplicate key value violates unique constraint', '23505'),
      withCode('syntax error at or near "selec"', '42601'),
      withCode('could not serialize access due to concurrent update', '40001'),
      withCode('canceling statement due to statement timeout', '57014'),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      new Error('the terminated connection of a user session'),
    ]) {
      assert.equal(isDatabaseUnavailable(error), false, error.message);
    }
    assert.equal(isDatabaseUnavailable('Connection terminated'), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
  });

  it('follows a cause chain that loops without looping itself', () => {
    const a = new Error('outer') as Error & { cause?: unknown };
    const b = new Error('inner', { cause: a });
    a.cause = b;
    assert.equal(isDatabaseUnavailable(a), false);
  });
});
