import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { sandboxClockJobsPath } from '../../src/http/sandbox-clock-route.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The service's side of the sandbox clock (src/http/sandbox-clock-route.ts): POST /__sandbox/clock
// reaches it over HTTP with the sandbox's token; nobody else may make the service run its jobs.

describe('sandbox clock-jobs route', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world?.close());

  const call = (authorization?: string) =>
    fetch(`${world.baseUrl}${sandboxClockJobsPath}`, {
      method: 'POST',
      headers: authorization === undefined ? {} : { authorization },
    });

  it('refuses a call without the sandbox token, or with another', async () => {
    const token = world.ctx.sandbox!.clockJobsToken;
    for (const authorization of [undefined, '', 'Bearer', `Bearer ${token}x`, token, `Basic ${token}`]) {
      const response = await call(authorization);
      assert.equal(response.status, 401, String(authorization));
      const body = (await response.json()) as { success: boolean; error: { code: string } };
      assert.equal(body.error.code, 'UNAUTHENTICATED');
    }
  });

  it('runs the clock-driven jobs for the sandbox token', async () => {
    const response = await call(`Bearer ${world.ctx.sandbox!.clockJobsToken}`);
    assert.equal(response.status, 204);
  });

  it('is left out of /openapi.json', async () => {
    const document = (await (await fetch(`${world.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    assert.equal(document.paths[sandboxClockJobsPath], undefined);
  });

  it('is not served without the sandbox', async () => {
    const app = await buildApp({ ...world.ctx, sandbox: undefined, sandboxClock: undefined });
    try {
      const response = await app.inject({ method: 'POST', url: sandboxClockJobsPath });
      assert.equal(response.statusCode, 404);
    } finally {
      await app.close();
    }
  });

  it('with a standalone sandbox, follows the time its call carries before the jobs run', async () => {
    const followed: Date[] = [];
    const token = 'a-shared-clock-token-of-the-deployment';
    const link = {
      refresh: async () => {},
      refreshIfStale: async () => {},
      follow: (now: Date) => void followed.push(now),
      stop: () => {},
    };
    const app = await buildApp({
      ...world.ctx,
      sandbox: undefined,
      sandboxClock: undefined,
      sandboxLink: { clockJobsToken: token, clock: link },
    });
    try {
      const send = (headers: Record<string, string>) =>
        app.inject({ method: 'POST', url: sandboxClockJobsPath, headers });
      const moved = '2031-05-01T10:00:00.000Z';
      assert.equal((await send({ authorization: 'Bearer another', 'x-sandbox-now': moved })).statusCode, 401);
      assert.equal((await send({ authorization: `Bearer ${token}` })).statusCode, 400);
      assert.equal(
        (await send({ authorization: `Bearer ${token}`, 'x-sandbox-now': 'soon' })).statusCode,
        400,
      );
      assert.deepEqual(followed, [], 'nothing refused is followed');
      assert.equal(
        (await send({ authorization: `Bearer ${token}`, 'x-sandbox-now': moved })).statusCode,
        204,
      );
      assert.deepEqual(followed, [new Date(moved)]);
    } finally {
      await app.close();
    }
  });

  it('still answers POST /__sandbox/clock with the moved clock once the jobs ran', async () => {
    const before = new Date(
      ((await (await fetch(`${world.baseUrl}/__sandbox/clock`)).json()) as { data: { now: string } }).data
        .now,
    );
    const response = await fetch(`${world.baseUrl}/__sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advanceSeconds: 3_600 }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { success: boolean; data: { now: string } };
    assert.equal(body.success, true);
    assert.ok(new Date(body.data.now).getTime() - before.getTime() >= 3_600_000);
  });
});
