import fs from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '..');

/**
 * The node flags `npm start` runs the service with (package.json: V8's heap sizing, docs/memory.md),
 * so that what the bench and the probe measure is the process a user starts.
 */
export function startScriptNodeFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  // `node <flags> src/main.ts <arguments>`: the flags are the words before the entry point.
  const words = pkg.scripts.start.split(' ');
  return words.slice(1, words.indexOf('src/main.ts'));
}
