import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { apiFiles } from '../../web/tools/api-types.ts';

// The web client is typed from the service's /openapi.json (API.md section 15): the checked-in types
// (web/src/api/schema.d.ts) and list of GET operations (get-operations.gen.ts) must be what the
// service describes now, or a contract change the client has not followed would typecheck.

describe("the web client's API types", () => {
  it('are those the service describes', { timeout: 120_000 }, async () => {
    for (const file of await apiFiles())
      assertSame(await readFile(file.path, 'utf8'), file.content, file.path);
  });
});

function assertSame(actual: string, expected: string, apiTypesPath: string): void {
  if (actual === expected) return;
  const actualLines = actual.split('\n');
  const expectedLines = expected.split('\n');
  const line = expectedLines.findIndex((text, i) => text !== actualLines[i]);
  const at = line === -1 ? actualLines.length : line;
  assert.fail(
    "the web client's API types are stale: run npm run web:api\n" +
      `first difference at line ${at + 1} of ${path.relative(process.cwd(), apiTypesPath)}:\n` +
      `  checked in: ${actualLines[at] ?? '(end of file)'}\n` +
      `  service:    ${expectedLines[at] ?? '(end of file)'}`,
  );
}
