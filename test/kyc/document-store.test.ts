import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DocumentStore } from '../../src/providers/storage/document-store.ts';
import { createLocalDocumentStore } from '../../src/providers/storage/local-store.ts';
import { createS3DocumentStore } from '../../src/providers/storage/s3-store.ts';

// Both document stores, on real files and over real HTTP: the local store in a temporary directory,
// the S3 store against a small S3-compatible server written here (path-style PUT and GET).

const key = () => randomBytes(32).toString('hex');

/** Random binary with runs of zeros and every byte value, which a text round trip would mangle. */
function binaryDocument(): Buffer {
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.alloc(64),
    Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
    randomBytes(100_000),
    Buffer.alloc(17),
  ]);
}

const badKeys = [
  '../x',
  `../${'a'.repeat(32)}`,
  `${'a'.repeat(32)}/x`,
  '',
  'a'.repeat(31),
  'a'.repeat(65),
  'A'.repeat(32),
  `${'a'.repeat(32)}\n`,
  `${'a'.repeat(32)}.tmp`,
  `.${'a'.repeat(32)}`,
  'g'.repeat(32),
];

async function assertRefusesBadKeys(store: DocumentStore): Promise<void> {
  for (const bad of badKeys) {
    await assert.rejects(store.put(bad, Buffer.from('x'), 'image/png'), RangeError, JSON.stringify(bad));
    await assert.rejects(store.get(bad), RangeError, JSON.stringify(bad));
    await assert.rejects(store.presignedUrl(bad, 60), RangeError, JSON.stringify(bad));
  }
}

describe('local document store', () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'billrail-store-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('creates its directory 0700 and writes files 0600, with no temporary file left', async () => {
    const directory = path.join(root, 'data', 'kyc-documents');
    const store = createLocalDocumentStore(directory);
    assert.equal(store.kind, 'local');
    assert.equal(statSync(directory).mode & 0o777, 0o700);
    const k = key();
    await store.put(k, Buffer.from('%PDF-1.4'), 'application/pdf');
    assert.equal(statSync(path.join(directory, k)).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(directory), [k]);
  });

  it('tightens an existing directory to 0700', () => {
    const directory = path.join(root, 'existing');
    mkdirSync(directory, { mode: 0o755 });
    assert.equal(statSync(directory).mode & 0o777, 0o755);
    createLocalDocumentStore(directory);
    assert.equal(statSync(directory).mode & 0o777, 0o700);
  });

  it('returns the bytes exactly as stored, and replaces them on a second put', async () => {
    const store = createLocalDocumentStore(path.join(root, 'round-trip'));
    const k = key();
    const bytes = binaryDocument();
    await store.put(k, bytes, 'image/png');
    const read = await store.get(k);
    assert.ok(read !== null);
    assert.equal(read.length, bytes.length);
    assert.ok(read.equals(bytes));
    const replacement = randomBytes(1000);
    await store.put(k, replacement, 'image/png');
    assert.ok((await store.get(k))?.equals(replacement));
  });

  it('returns null for a missing key and no presigned URL', async () => {
    const store = createLocalDocumentStore(path.join(root, 'missing'));
    assert.equal(await store.get(key()), null);
    const k = key();
    await store.put(k, Buffer.from([0xff, 0xd8, 0xff]), 'image/jpeg');
    assert.equal(await store.presignedUrl(k, 600), null);
  });

  it('deletes a document for good, and deleting one already gone is no error', async () => {
    const directory = path.join(root, 'deleted');
    const store = createLocalDocumentStore(directory);
    const k = key();
    await store.put(k, binaryDocument(), 'image/png');
    await store.delete(k);
    assert.equal(await store.get(k), null);
    assert.deepEqual(readdirSync(directory), []);
    await store.delete(k);
    await assert.rejects(store.delete('../x'), RangeError);
  });

  it('refuses every key that is not 32 to 64 lowercase hex characters, touching no file', async () => {
    const directory = path.join(root, 'jail', 'kyc-documents');
    const store = createLocalDocumentStore(directory);
    await assertRefusesBadKeys(store);
    assert.deepEqual(readdirSync(directory), []);
    assert.deepEqual(readdirSync(path.join(root, 'jail')), ['kyc-documents']);
    // The bounds themselves are accepted.
    await store.put('a'.repeat(32), Buffer.from('x'), 'image/png');
    await store.put('0123456789abcdef'.repeat(4), Buffer.from('y'), 'image/png');
    assert.deepEqual(readdirSync(directory).sort(), ['0123456789abcdef'.repeat(4), 'a'.repeat(32)].sort());
  });
});

type StoredObject = { body: Buffer; contentType: string | undefined };
type SeenRequest = { method: string; path: string; query: URLSearchParams; headers: IncomingHttpHeaders };

/**
 * Just enough of S3's REST API, path-style: PUT /bucket/key stores the body, GET returns it (honouring
 * response-cache-control as S3 does) or S3's NoSuchKey / NoSuchBucket XML errors. Signatures are not
 * verified, only required to be there.
 */
async function startFakeS3(bucket: string) {
  const objects = new Map<string, StoredObject>();
  const requests: SeenRequest[] = [];
  const errorXml = (code: string, message: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>fake</RequestId></Error>`;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://fake-s3');
      const [, bucketName, ...rest] = url.pathname.split('/');
      const objectKey = decodeURIComponent(rest.join('/'));
      requests.push({
        method: request.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: request.headers,
      });
      const sendError = (status: number, code: string, message: string) => {
        response.writeHead(status, { 'content-type': 'application/xml' });
        response.end(errorXml(code, message));
      };
      const signed =
        request.headers.authorization?.startsWith('AWS4-HMAC-SHA256 ') === true ||
        url.searchParams.has('X-Amz-Signature');
      if (!signed) return sendError(403, 'AccessDenied', 'Access Denied');
      if (bucketName !== bucket) return sendError(404, 'NoSuchBucket', 'The specified bucket does not exist');
      if (request.method === 'PUT') {
        objects.set(objectKey, { body: Buffer.concat(chunks), contentType: request.headers['content-type'] });
        response.writeHead(200, { etag: '"fake-etag"', 'content-length': '0' });
        return response.end();
      }
      if (request.method === 'GET') {
        const object = objects.get(objectKey);
        if (object === undefined) return sendError(404, 'NoSuchKey', 'The specified key does not exist.');
        const cacheControl = url.searchParams.get('response-cache-control');
        response.writeHead(200, {
          'content-type': object.contentType ?? 'application/octet-stream',
          'content-length': String(object.body.length),
          etag: '"fake-etag"',
          ...(cacheControl !== null ? { 'cache-control': cacheControl } : {}),
        });
        return response.end(object.body);
      }
      if (request.method === 'DELETE') {
        // S3 answers 204 whether or not the key existed.
        objects.delete(objectKey);
        response.writeHead(204);
        return response.end();
      }
      return sendError(405, 'MethodNotAllowed', 'The specified method is not allowed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

describe('S3 document store', () => {
  const bucket = 'billrail-kyc-test';
  let fake: Awaited<ReturnType<typeof startFakeS3>>;
  let store: DocumentStore;
  before(async () => {
    fake = await startFakeS3(bucket);
    store = await createS3DocumentStore({
      bucket,
      region: 'us-east-1',
      endpoint: fake.endpoint,
      forcePathStyle: true,
      accessKeyId: 'AKIAFAKEFAKEFAKE',
      secretAccessKey: 'fake-secret-access-key',
    });
  });
  after(() => fake.close());

  it('puts with the content type and AES256 encryption, and gets the exact bytes back', async () => {
    assert.equal(store.kind, 's3');
    const k = key();
    const bytes = binaryDocument();
    await store.put(k, bytes, 'image/png');
    const put = fake.requests.at(-1)!;
    assert.equal(put.method, 'PUT');
    assert.equal(put.path, `/${bucket}/${k}`);
    assert.equal(put.headers['content-type'], 'image/png');
    assert.equal(put.headers['x-amz-server-side-encryption'], 'AES256');
    assert.match(put.headers.authorization ?? '', /Credential=AKIAFAKEFAKEFAKE\/\d{8}\/us-east-1\/s3\//);
    assert.ok(fake.objects.get(k)?.body.equals(bytes), 'the server holds the exact bytes');

    const read = await store.get(k);
    assert.ok(read !== null);
    assert.equal(read.length, bytes.length);
    assert.ok(read.equals(bytes));
    assert.equal(fake.requests.at(-1)?.method, 'GET');
  });

  it('returns null for a missing key (NoSuchKey), but fails on a missing bucket', async () => {
    assert.equal(await store.get(key()), null);
    const elsewhere = await createS3DocumentStore({
      bucket: 'no-such-bucket',
      region: 'us-east-1',
      endpoint: fake.endpoint,
      forcePathStyle: true,
      accessKeyId: 'AKIAFAKEFAKEFAKE',
      secretAccessKey: 'fake-secret-access-key',
    });
    await assert.rejects(elsewhere.get(key()), (error: Error) => error.name === 'NoSuchBucket');
  });

  it('presigns a GET that lives the given seconds and is served private, no-store', async () => {
    const k = key();
    const bytes = randomBytes(4096);
    await store.put(k, bytes, 'application/pdf');
    const url = await store.presignedUrl(k, 600);
    assert.ok(url !== null);
    assert.ok(url.startsWith(`${fake.endpoint}/${bucket}/${k}?`), url);
    assert.ok(url.includes('X-Amz-Expires=600'), url);
    assert.ok(url.includes('response-cache-control=private%2C%20no-store'), url);
    assert.ok(url.includes('X-Amz-Signature='), url);
    assert.ok(!url.includes('fake-secret-access-key'), 'the secret never appears in a URL');

    const response = await fetch(url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));

    assert.ok((await store.presignedUrl(k, 60))?.includes('X-Amz-Expires=60&'));
  });

  it('refuses to presign for more than 600 seconds, or for none', async () => {
    const k = key();
    for (const seconds of [601, 3600, 0, -1, 1.5, Number.NaN]) {
      await assert.rejects(store.presignedUrl(k, seconds), RangeError, String(seconds));
    }
  });

  it('deletes an object with DeleteObject, and deleting one already gone is no error', async () => {
    const k = key();
    await store.put(k, binaryDocument(), 'image/png');
    await store.delete(k);
    assert.equal(await store.get(k), null);
    assert.equal(fake.requests.at(-2)?.method, 'DELETE');
    await store.delete(k);
  });

  it('refuses every key that is not 32 to 64 lowercase hex characters, sending nothing', async () => {
    const before = fake.requests.length;
    await assertRefusesBadKeys(store);
    assert.equal(fake.requests.length, before);
  });
});
