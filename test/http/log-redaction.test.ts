import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/context.ts';
import { createWorld, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { pngDocument, submitTier3, userAtTier } from '../kyc/kyc-support.ts';

// Credentials carried in a URL's query string never reach the log (issue 25 item 6): a signed KYC
// document URL stays usable for 10 minutes by whoever reads it, and a liveness token hands back a
// face check. The service's own logger writes to memory here, at info, so the test reads every line
// it wrote about these requests: the request log, error logs, anything else.

describe('credentials in URLs are kept out of the log', () => {
  let world: World;
  const lines: string[] = [];
  let user: SignedIn;
  let documentId: string;

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    world = await createWorld({ logger: createLogger({ logLevel: 'info' }, sink) });
    user = await userAtTier(world, 2);
    const view = ok(
      await submitTier3(world, user, {
        documentBase64: pngDocument().toString('base64'),
        documentMimeType: 'image/png',
      }),
    );
    assert.ok(view.documentId !== undefined);
    documentId = view.documentId;
  });
  after(() => world?.close());

  const documentUrl = async () =>
    new URL(
      ok(await post<{ url: string }>(world, 'getKycDocumentUrl', { documentId }, { token: user.accessToken }))
        .url,
    );

  it('logs a document request without its signature or expiry, whatever the answer', async () => {
    const url = await documentUrl();
    const signature = url.searchParams.get('signature') ?? '';
    const expires = url.searchParams.get('expires') ?? '';
    assert.match(signature, /^[0-9a-f]{64}$/);
    assert.match(expires, /^\d{10}$/);

    assert.equal((await fetch(url)).status, 200);
    // A forged one, one for another id, a repeated parameter, a URL the router refuses (400) and an
    // expired one are logged too, and must not leak what they carried either.
    const forged = new URL(url);
    forged.searchParams.set(
      'signature',
      signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
    );
    assert.equal((await fetch(forged)).status, 403);
    assert.equal((await fetch(`${world.baseUrl}/kyc/documents/not-a-uuid${url.search}`)).status, 404);
    assert.equal((await fetch(`${url.href}&signature=${signature}`)).status, 403);
    assert.equal((await fetch(`${world.baseUrl}/kyc/documents/%E0%A4%A${url.search}`)).status, 400);
    world.ctx.sandboxClock!.advance(601);
    assert.equal((await fetch(url)).status, 403);

    const requestLines = lines.filter((line) => line.includes('/kyc/documents/'));
    assert.ok(requestLines.length >= 6, `the document requests are logged: ${requestLines.length} lines`);
    assert.ok(requestLines.some((line) => line.includes(`/kyc/documents/${documentId}`)));
    const log = lines.join('\n');
    assert.ok(!log.includes(signature), 'the signature is nowhere in the log');
    assert.ok(!log.includes(forged.searchParams.get('signature') ?? ''), 'nor a forged one');
    assert.doesNotMatch(log, new RegExp(`\\b${expires}\\b`), 'the expiry is nowhere in the log');
    assert.doesNotMatch(log, /expires=|signature=/);
  });

  it('logs a liveness token carried back in a URL as redacted, on any path', async () => {
    const token = `lv-${crypto.randomUUID()}`;
    await fetch(`${world.baseUrl}/verify?livenessToken=${token}&return=%2F`, {
      headers: { accept: 'text/html' },
    });
    await fetch(`${world.baseUrl}/_serverFn/getKycStatus?livenessToken=${encodeURIComponent(token)}`, {
      headers: { authorization: `Bearer ${user.accessToken}` },
    });
    const requestLines = lines.filter((line) => line.includes('/verify?') || line.includes('/getKycStatus?'));
    assert.ok(requestLines.length >= 2, 'the requests are logged');
    assert.ok(!lines.join('\n').includes(token), 'the liveness token is nowhere in the log');
    // What is not a credential stays readable, to tell requests apart.
    assert.ok(requestLines.some((line) => line.includes('return=%2F')));
  });

  it('redacts a signed URL wherever a line carries it: an error message, a URL inside a parameter', async () => {
    const url = await documentUrl();
    const signature = url.searchParams.get('signature') ?? '';
    const token = `lv-${crypto.randomUUID()}`;
    world.ctx.logger.error({ err: new Error(`could not fetch ${url.href}`) }, 'document fetch failed');
    world.ctx.logger.warn(
      { next: `/sign-in?next=${encodeURIComponent(`/verify?livenessToken=${token}&x=1`)}` },
      'redirected',
    );
    const log = lines.join('\n');
    assert.ok(log.includes('could not fetch'), 'the lines were written');
    assert.ok(!log.includes(signature));
    assert.ok(!log.includes(token));
  });
});
