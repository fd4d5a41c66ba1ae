import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Agent } from 'undici';
import { createOutboundAgent, responseBytesMax } from '../../src/providers/http-exchange.ts';
import { createDataVendorClient } from '../../src/providers/vtu/data-vendor-client.ts';
import { VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  type Handler,
  json,
  type Received,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';

// The context's outbound pool bounds the body of every answer (responseBytesMax): a party that sends
// more is no answer, which each adapter already maps to its indefinite outcome (a purchase's
// `unknown`, a catalogue's VtuProviderError), never a crash and never a process holding the body.

const token = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

/** A JSON string of exactly `bytes` bytes: {"detail":"xxx…"}. */
function jsonOfBytes(bytes: number): string {
  const frame = '{"detail":""}';
  return `{"detail":"${'x'.repeat(bytes - frame.length)}"}`;
}

/** Answers 200 with the body, its length declared (content-length) or not (chunked). */
const bodyOf =
  (text: string, declared: boolean): Handler =>
  (_request, _body, response) => {
    response.writeHead(200, {
      'content-type': 'application/json',
      ...(declared ? { 'content-length': String(Buffer.byteLength(text)) } : {}),
    });
    // In pieces, as a large answer comes, so that the bound is met in the middle of the body.
    const piece = 64 * 1024;
    for (let at = 0; at < text.length; at += piece) response.write(text.slice(at, at + piece));
    response.end();
  };

describe('an answer over the outbound pool’s body bound', () => {
  let server: ScriptedServer;
  let handler: Handler;
  let agent: Agent;
  const received: Received[] = [];
  const oversized = jsonOfBytes(responseBytesMax + 1);

  before(async () => {
    server = await startScriptedServer(
      (request, body, response) => handler(request, body, response),
      received,
    );
    agent = createOutboundAgent();
  });
  beforeEach(() => {
    received.length = 0;
  });
  after(async () => {
    await agent.close();
    await server.close();
  });

  const vendor = () =>
    createDataVendorClient({
      name: 'data',
      baseUrl: server.baseUrl,
      token,
      timeoutMs: 5_000,
      dispatcher: agent,
    });

  for (const declared of [true, false]) {
    const how = declared ? 'with its length declared' : 'chunked';

    it(`a purchase answered ${how} → unknown, and the POST is not repeated`, async () => {
      handler = bodyOf(oversized, declared);
      const outcome = await vendor().purchase({
        service: 'data',
        reference: 'vtu_0192f1a2-data-1',
        network: 'mtn',
        planId: '337',
        phone: '08031234560',
      });
      assert.deepEqual(outcome, {
        status: 'unknown',
        reason: `data: data purchase answered with a body over ${responseBytesMax} bytes`,
      });
      assert.equal(received.length, 1);
    });

    it(`a catalogue answered ${how} → VtuProviderError, and the read is not repeated`, async () => {
      handler = bodyOf(oversized, declared);
      await assert.rejects(vendor().dataPlans('mtn'), (error: unknown) => {
        assert.ok(error instanceof VtuProviderError);
        assert.match(error.message, new RegExp(`answered with a body over ${responseBytesMax} bytes`));
        return true;
      });
      assert.equal(received.length, 1, 'the same read would bring the same body');
    });
  }

  it('a body of exactly the bound is read', async () => {
    handler = bodyOf(jsonOfBytes(responseBytesMax), true);
    // The vendor's refusal shape is not an account: read to its end, then refused by its schema.
    await assert.rejects(vendor().balance(), /unexpected body/);
  });

  it('the pool still serves the next call', async () => {
    handler = json(200, {
      user: { id: 1, username: 'billrail', email: 'ops@billrail.example', wallet_balance: '1000.0' },
      Dataplans: {},
    });
    assert.equal(await vendor().balance(), 1000_00n);
  });
});
