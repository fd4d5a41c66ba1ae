import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { ensureWebBuilt, webDistDir } from '../../src/web-build.ts';

// What the service worker precaches (web/vite.config.ts): the app shell, but not jsPDF, which only a
// receipt saved as a PDF loads, on demand; and jsPDF's optional html2canvas, canvg and dompurify,
// which the receipt's text-only PDF never calls, are not in the build at all (about 234 KB gzipped
// together, three times the entry chunk, were precached on every install).

const BUILD_TIMEOUT = { timeout: 180_000 };
const assetsDir = path.join(webDistDir, 'assets');

/** The URLs of the precache manifest injected into sw.js. */
async function precached(): Promise<string[]> {
  const worker = await readFile(path.join(webDistDir, 'sw.js'), 'utf8');
  return [...worker.matchAll(/"url":"([^"]+)"/g)].map((m) => m[1]!);
}

describe('the web client’s precache and jsPDF', BUILD_TIMEOUT, () => {
  let scripts: string[];
  before(async () => {
    await ensureWebBuilt();
    scripts = (await readdir(assetsDir)).filter((name) => name.endsWith('.js'));
  }, BUILD_TIMEOUT);

  const pdfChunk = () => {
    const found = scripts.filter((name) => name.startsWith('jspdf'));
    assert.equal(found.length, 1, `one jsPDF chunk: ${found.join(', ')}`);
    return found[0]!;
  };

  it('precaches the shell and the entry chunk, and nothing of jsPDF', async () => {
    const urls = await precached();
    assert.ok(urls.includes('index.html'), urls.join(', '));
    const html = await readFile(path.join(webDistDir, 'index.html'), 'utf8');
    const entry = /<script[^>]+src="\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(entry !== undefined && urls.includes(entry), `the entry ${entry} is precached`);
    // A route's chunk, as an example of the rest.
    assert.ok(
      urls.some((url) => /^assets\/receipt-[\w-]+\.js$/.test(url)),
      'the receipt chunk is precached',
    );
    const heavy = urls.filter((url) => /jspdf|html2canvas|canvg|purify|index\.es-/i.test(url));
    assert.deepEqual(heavy, []);
  });

  it('builds jsPDF, loaded by the receipt on demand, without its optional dependencies', async () => {
    const pdf = pdfChunk();
    const importers = [];
    for (const name of scripts) {
      if ((await readFile(path.join(assetsDir, name), 'utf8')).includes(`import(\`./${pdf}\`)`))
        importers.push(name);
    }
    assert.ok(
      importers.some((name) => name.startsWith('receipt')),
      `jsPDF is imported on demand by the receipt: ${importers.join(', ')}`,
    );
    const optional = scripts.filter((name) => /html2canvas|canvg|purify|^index\.es-/i.test(name));
    assert.deepEqual(optional, []);
    // What jsPDF loads on demand is only the stand-in, which refuses at once.
    const source = await readFile(path.join(assetsDir, pdf), 'utf8');
    const loaded = new Set([...source.matchAll(/import\(`\.\/([^`]+)`\)/g)].map((m) => m[1]!));
    assert.deepEqual(
      [...loaded].map((name) => name.replace(/-[\w-]{8}\.js$/, '')),
      ['_jspdf-unused-optional'],
    );
    const standIn = await readFile(path.join(assetsDir, [...loaded][0]!), 'utf8');
    assert.match(standIn, /^throw /);
    assert.ok(standIn.length < 200, standIn);
  });
});
