import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { until } from '../helpers/until.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The providers' faults (src/sandbox/faults.ts) in the sandbox served in process: they meet the
// provider's API only, `count` ends them, and a held request is released when its client gives up.

type FaultState = { mode: string; remaining: number | null; met: string[]; held: number };

describe('sandbox provider faults (in process)', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const setFault = async (provider: string, body: unknown) => {
    const response = await fetch(`${world.baseUrl}/__sandbox/providers/${provider}/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { data: FaultState } };
  };
  const faultOf = async (provider: string) =>
    (
      (await (await fetch(`${world.baseUrl}/__sandbox/providers/${provider}/faults`)).json()) as {
        data: FaultState;
      }
    ).data;

  it('answers 503 to as many API requests as counted, and leaves the controls alone', async () => {
    assert.equal((await setFault('data', { mode: 'error', count: 2 })).status, 200);
    const balance = await fetch(`${world.baseUrl}/__sandbox/providers/data/balance`);
    assert.equal(balance.status, 200, 'a control is not the provider API');
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await fetch(`${world.baseUrl}/__sandbox/vtu/data/api/user/`);
      await answer.arrayBuffer();
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses.slice(0, 2), [503, 503]);
    assert.notEqual(statuses[2], 503);
    assert.deepEqual(await faultOf('data'), {
      mode: 'normal',
      remaining: null,
      met: ['GET /__sandbox/vtu/data/api/user/', 'GET /__sandbox/vtu/data/api/user/'],
      held: 0,
    });
  });

  it('holds a request without answering until its client gives up', async () => {
    assert.equal((await setFault('payments', { mode: 'timeout' })).status, 200);
    const client = new AbortController();
    const call = fetch(`${world.baseUrl}/__sandbox/payments/bank`, { signal: client.signal });
    await until(async () => (await faultOf('payments')).held === 1, 'the request held');
    client.abort();
    await assert.rejects(call, { name: 'AbortError' });
    await until(async () => (await faultOf('payments')).held === 0, 'the request released');
    assert.equal((await setFault('payments', { mode: 'normal' })).body.data.mode, 'normal');
    const bank = await fetch(`${world.baseUrl}/__sandbox/payments/bank`, {
      headers: { authorization: 'Bearer sk_test_sandbox' },
    });
    assert.equal(bank.status, 200);
  });

  it('refuses a bad fault with 400 and an unknown provider with 404', async () => {
    assert.equal((await setFault('bills', { mode: 'error', count: 1.5 })).status, 400);
    assert.equal((await setFault('bills', { count: 1 })).status, 400);
    assert.equal((await setFault('kyc', { mode: 'error' })).status, 404);
    assert.equal((await faultOf('bills')).mode, 'normal');
  });
});
