import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { CONTENT_SECURITY_POLICY } from '../../src/http/web-app.ts';
import { ensureWebBuilt, webBuildIsFresh, webDir, webDistDir, webSourceHash } from '../../src/web-build.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The web client as the service serves it (API.md section 15): built by the service when missing or
// stale, served at / with a strict Content-Security-Policy, hashed assets cached for good and the
// rest revalidated, index.html for a browser loading one of the client's routes, and the service's
// JSON 404 for everything else, exactly as before.

const BUILD_TIMEOUT = { timeout: 180_000 };
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

/** The script and stylesheet URLs of index.html. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    httpGet(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

function assetUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

function assertWebHeaders(response: Response, cacheControl: string): void {
  assert.equal(response.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(response.headers.get('cache-control'), cacheControl);
}

async function assertJsonNotFound(response: Response, method: string, pathname: string): Promise<void> {
  assert.equal(response.status, 404);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(await response.json(), {
    success: false,
    error: { code: 'NOT_FOUND', message: `no such operation: ${method} ${pathname}` },
  });
  // None of the web app's headers: a 404 is the API's, and never cached for a year.
  assert.equal(response.headers.get('content-security-policy'), null);
  assert.doesNotMatch(response.headers.get('cache-control') ?? '', /immutable/);
}

describe('the web client served by the service', BUILD_TIMEOUT, () => {
  let world: World;
  let indexHtml: string;

  before(async () => {
    await ensureWebBuilt();
    // Few requests a minute: the client's files must not count against the caller's API budget.
    world = await createWorld({
      env: { RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5' },
    });
  }, BUILD_TIMEOUT);
  after(() => world?.close());

  it('serves index.html at / with the CSP, revalidated on every use', async () => {
    const response = await fetch(`${world.baseUrl}/`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assertWebHeaders(response, 'no-cache');
    indexHtml = await response.text();
    assert.equal(indexHtml, await readFile(path.join(webDistDir, 'index.html'), 'utf8'));
    assert.match(indexHtml, /<div id="root">/);
  });

  it('has no inline script or style in index.html, which the CSP would refuse', () => {
    const scripts = [...indexHtml.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length > 0, 'index.html loads a script');
    for (const [tag, attributes, body] of scripts) {
      assert.match(attributes ?? '', /\bsrc="\/[^"]+"/, `a script without src: ${tag}`);
      assert.equal(body?.trim(), '', `a script with a body: ${tag}`);
    }
    assert.doesNotMatch(indexHtml, /<style\b/);
    assert.doesNotMatch(indexHtml, /\sstyle="/);
    assert.doesNotMatch(indexHtml, /\son[a-z]+="/, 'no inline event handler');
  });

  it('caches the hashed assets for good, with the CSP, and never rate-limits them', async () => {
    const urls = assetUrls(indexHtml);
    const script = urls.find((url) => url.endsWith('.js'));
    assert.ok(script !== undefined, indexHtml);
    // More requests than RATE_LIMIT_ANONYMOUS_PER_MINUTE allows an address on the API.
    for (const url of [...urls, script, script, script, script, script, script]) {
      const response = await fetch(`${world.baseUrl}${url}`);
      assert.equal(response.status, 200, url);
      assertWebHeaders(response, 'public, max-age=31536000, immutable');
      await response.arrayBuffer();
    }
    const response = await fetch(`${world.baseUrl}${script}`);
    assert.match(response.headers.get('content-type') ?? '', /^(?:text|application)\/javascript/);
    assert.equal(await response.text(), await readFile(path.join(webDistDir, script), 'utf8'));
  });

  it('sends the Brotli or gzip copy the build made to a browser that accepts it', async () => {
    const script = assetUrls(indexHtml).find((url) => url.endsWith('.js'))!;
    const plain = Buffer.from(
      await (
        await fetch(`${world.baseUrl}${script}`, { headers: { 'accept-encoding': 'identity' } })
      ).arrayBuffer(),
    );
    for (const [encoding, decode] of [
      ['br', brotliDecompressSync],
      ['gzip', gunzipSync],
    ] as const) {
      // Undici's fetch would decode the body itself; node:http hands over the bytes as sent.
      const { headers, body } = await rawGet(`${world.baseUrl}${script}`, { 'accept-encoding': encoding });
      assert.equal(headers['content-encoding'], encoding);
      assert.match(String(headers.vary), /accept-encoding/i);
      assert.equal(headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.ok(body.length < plain.length / 2, `${encoding}: ${body.length} of ${plain.length} bytes`);
      assert.deepEqual(decode(body), plain);
    }
  });

  it('answers a revalidation with 304 and the same headers', async () => {
    const first = await fetch(`${world.baseUrl}/`);
    await first.text();
    const etag = first.headers.get('etag');
    assert.ok(etag !== null);
    // As a browser revalidates (fetch would otherwise add Cache-Control: no-cache, which forbids a 304).
    const again = await fetch(`${world.baseUrl}/`, {
      headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
    });
    assert.equal(again.status, 304);
    assertWebHeaders(again, 'no-cache');
  });

  it('revalidates the service worker, the manifest and the icons', async () => {
    for (const [url, type] of [
      ['/sw.js', /javascript/],
      ['/manifest.webmanifest', /^application\/manifest\+json/],
      ['/icon-192.png', /^image\/png/],
    ] as const) {
      const response = await fetch(`${world.baseUrl}${url}`);
      assert.equal(response.status, 200, url);
      assert.match(response.headers.get('content-type') ?? '', type, url);
      assertWebHeaders(response, 'no-cache');
      await response.arrayBuffer();
    }
    const head = await fetch(`${world.baseUrl}/sw.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assertWebHeaders(head, 'no-cache');
  });

  it("answers index.html for a browser loading one of the client's routes", async () => {
    for (const route of ['/history', '/transactions', '/fund/return?reference=abc', '/buy/airtime']) {
      const response = await fetch(`${world.baseUrl}${route}`, { headers: HTML });
      assert.equal(response.status, 200, route);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      assertWebHeaders(response, 'no-cache');
      assert.equal(await response.text(), indexHtml, route);
    }
    const head = await fetch(`${world.baseUrl}/history`, { method: 'HEAD', headers: HTML });
    assert.equal(head.status, 200);
    assertWebHeaders(head, 'no-cache');
  });

  it('keeps the JSON 404 for the API, the sandbox and anything but a page load', async () => {
    for (const pathname of [
      '/_serverFn/unknownOp',
      '/_serverFn',
      '/api/public/nothing',
      '/__sandbox/nothing',
      '/kyc/documents',
      '/metrics/extra',
      '/assets/missing.js',
      '/favicon.ico',
    ]) {
      await assertJsonNotFound(
        await fetch(`${world.baseUrl}${pathname}`, { headers: HTML }),
        'GET',
        pathname,
      );
    }
    // Not a page load: what a script or an API client asks for.
    await assertJsonNotFound(await fetch(`${world.baseUrl}/history`), 'GET', '/history');
    await assertJsonNotFound(
      await fetch(`${world.baseUrl}/history`, { headers: { accept: 'application/json' } }),
      'GET',
      '/history',
    );
    await assertJsonNotFound(
      await fetch(`${world.baseUrl}/history`, { method: 'POST', headers: HTML }),
      'POST',
      '/history',
    );
    await assertJsonNotFound(
      await fetch(`${world.baseUrl}/_serverFn/unknownOp`),
      'GET',
      '/_serverFn/unknownOp',
    );
  });

  it('serves no file outside the build, nor the build’s own dot-files', async () => {
    for (const pathname of ['/.source-hash', '/assets/.source-hash', '/assets/..%2findex.html']) {
      const response = await fetch(`${world.baseUrl}${pathname}`);
      assert.equal(response.status, 404, pathname);
      assert.equal(response.headers.get('content-security-policy'), null, pathname);
      await response.arrayBuffer();
    }
  });

  it('leaves the headers of the API and the sandbox as they were', async () => {
    for (const url of ['/healthz', '/openapi.json', '/_serverFn/getWallet']) {
      const response = await fetch(`${world.baseUrl}${url}`);
      assert.equal(response.headers.get('content-security-policy'), null, url);
      assert.equal(response.headers.get('referrer-policy'), null, url);
      await response.arrayBuffer();
    }
  });

  it('keeps the files out of /openapi.json', async () => {
    const document = (await (await fetch(`${world.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    const outside = Object.keys(document.paths).filter((p) => !p.startsWith('/_serverFn/'));
    assert.deepEqual(outside, []);
  });
});

describe('building the web client', BUILD_TIMEOUT, () => {
  const cleanups: string[] = [];
  after(async () => {
    for (const dir of cleanups) await rm(dir, { recursive: true, force: true });
  });

  /** A copy of the web workspace's sources and its build's index.html and hash, in a temporary directory. */
  async function copyOfWeb(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-web-'));
    cleanups.push(dir);
    for (const entry of ['src', 'public', 'index.html', 'vite.config.ts', 'package.json']) {
      if (existsSync(path.join(webDir, entry)))
        await cp(path.join(webDir, entry), path.join(dir, entry), { recursive: true });
    }
    await mkdir(path.join(dir, 'dist'));
    for (const file of ['index.html', '.source-hash'])
      await cp(path.join(webDistDir, file), path.join(dir, 'dist', file));
    return dir;
  }

  it('does not build again while the sources are unchanged', async () => {
    await ensureWebBuilt();
    assert.equal(await webBuildIsFresh(), true);
    assert.deepEqual(await ensureWebBuilt(), { built: false, dir: webDistDir });
  });

  it('finds the build stale when a source changes, is added or the hash is gone', async () => {
    await ensureWebBuilt();
    const dir = await copyOfWeb();
    // The hash is of relative paths and contents: a copy is as fresh as the original.
    assert.equal(await webSourceHash(dir), await webSourceHash());
    assert.equal(await webBuildIsFresh(dir), true);

    // The route tree is written by the build itself: not a source.
    await writeFile(path.join(dir, 'src', 'routeTree.gen.ts'), '// regenerated\n');
    assert.equal(await webBuildIsFresh(dir), true);

    const main = path.join(dir, 'src', 'main.tsx');
    const original = await readFile(main, 'utf8');
    await writeFile(main, `${original}\n// changed\n`);
    assert.equal(await webBuildIsFresh(dir), false);
    await writeFile(main, original);
    assert.equal(await webBuildIsFresh(dir), true);

    await writeFile(path.join(dir, 'public', 'robots.txt'), 'User-agent: *\n');
    assert.equal(await webBuildIsFresh(dir), false);
    await rm(path.join(dir, 'public', 'robots.txt'));
    assert.equal(await webBuildIsFresh(dir), true);

    await rm(path.join(dir, 'dist', '.source-hash'));
    assert.equal(await webBuildIsFresh(dir), false);
  });

  it('serves nothing, and says so, without a web client in the checkout', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-no-web-'));
    cleanups.push(dir);
    const logged: string[] = [];
    const logger = { info: () => {}, warn: (_fields: object, message: string) => void logged.push(message) };
    assert.equal(await webSourceHash(dir), undefined);
    assert.deepEqual(await ensureWebBuilt({ logger: logger as never, dir }), {
      built: false,
      dir: path.join(dir, 'dist'),
    });
    assert.deepEqual(logged, ['no web client sources: the web client is not served']);
  });

  it('leaves one whole build when two processes build at once', async () => {
    await ensureWebBuilt();
    const files = async () => (await readdir(webDistDir, { recursive: true })).sort();
    const before = await files();
    // Stale for both: each builds and renames its build into place.
    await writeFile(path.join(webDistDir, '.source-hash'), 'stale\n');
    const script = `import { ensureWebBuilt } from ${JSON.stringify(path.resolve('src/web-build.ts'))};
      process.stdout.write(JSON.stringify(await ensureWebBuilt()));`;
    const results = await Promise.all(
      [1, 2].map(
        () =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            let stdout = '';
            let stderr = '';
            child.stdout.on('data', (chunk: Buffer) => {
              stdout += chunk.toString('utf8');
            });
            child.stderr.on('data', (chunk: Buffer) => {
              stderr += chunk.toString('utf8');
            });
            child.on('exit', (code) => resolve({ code, stdout, stderr }));
          }),
      ),
    );
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    assert.ok(
      results.some((r) => r.stdout.includes('"built":true')),
      JSON.stringify(results),
    );
    assert.equal(await webBuildIsFresh(), true);
    // The same sources give the same files: a build renamed over another changes no URL.
    assert.deepEqual(await files(), before);
    const html = await readFile(path.join(webDistDir, 'index.html'), 'utf8');
    for (const url of assetUrls(html)) assert.ok(existsSync(path.join(webDistDir, url)), url);
  });
});
