import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// The S3 SDK is imported only when a bucket is configured (s3-store.ts): a process on local storage,
// as `npm start` runs by default, never loads a module of @aws-sdk. Each case is a child process of
// the pinned node whose resolve hook records every module resolved under node_modules/@aws-sdk/ (the
// SDK's packages are CommonJS reached through import(): the hook sees both). The child imports what
// every process imports (the composition root, the modules, the app), then builds a document store as
// the context does for its configuration. The S3 case is the control: the hook sees the SDK there.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const script = (store: 'local' | 's3') => `
  import { registerHooks } from 'node:module';
  import { mkdtemp, rm } from 'node:fs/promises';
  import os from 'node:os';
  import path from 'node:path';
  const sdk = new Set();
  registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      const at = resolved.url.indexOf('/node_modules/@aws-sdk/');
      if (at !== -1) sdk.add(resolved.url.slice(at + '/node_modules/'.length).split('/').slice(0, 2).join('/'));
      return resolved;
    },
  });
  const src = ${JSON.stringify(`${ROOT}src/`)};
  await import(src + 'context.ts');
  await import(src + 'modules.ts');
  await import(src + 'app.ts');
  if (${JSON.stringify(store)} === 'local') {
    const { createLocalDocumentStore } = await import(src + 'providers/storage/local-store.ts');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-documents-'));
    const documents = createLocalDocumentStore(dir);
    await rm(dir, { recursive: true });
    if (documents.kind !== 'local') throw new Error('not a local store: ' + documents.kind);
  } else {
    const { createS3DocumentStore } = await import(src + 'providers/storage/s3-store.ts');
    const documents = await createS3DocumentStore({
      bucket: 'billrail-kyc-test',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9', // never called: the store is only built
      forcePathStyle: true,
      accessKeyId: 'AKIAFAKEFAKEFAKE',
      secretAccessKey: 'fake-secret-access-key',
    });
    if (documents.kind !== 's3') throw new Error('not an S3 store: ' + documents.kind);
  }
  process.stdout.write(JSON.stringify({ sdk: [...sdk].sort() }));
`;

/** The @aws-sdk packages a child resolved that imported a process's modules and built the store. */
async function sdkPackagesLoaded(store: 'local' | 's3'): Promise<string[]> {
  // execFile refuses (with the child's stderr) when the child does not exit 0.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', script(store)],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    },
  );
  return (JSON.parse(stdout) as { sdk: string[] }).sdk;
}

describe('the S3 SDK', () => {
  it('is not loaded by a process on local storage', async () => {
    assert.deepEqual(await sdkPackagesLoaded('local'), []);
  });

  it('is loaded once an S3 store is built', async () => {
    const loaded = await sdkPackagesLoaded('s3');
    assert.ok(loaded.includes('@aws-sdk/client-s3'), loaded.join(', '));
    assert.ok(loaded.includes('@aws-sdk/s3-request-presigner'), loaded.join(', '));
  });
});
