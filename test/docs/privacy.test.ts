import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { closureReasons } from '../../src/account-closure/schemas.ts';

// docs/privacy.md tells a person what closing their account deletes, keeps and erases (issue 41
// item 5): it must say what the code does. Every table a domain's account-closure.ts deletes from
// is named (in backticks) in the section that says when: kyc's at the end of retention, every other
// domain's when the account closes. The records API.md 17.3 keeps are named in the kept section,
// and the settings and reasons a person meets are named at all.

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The document's sections by their `## ` heading, each with its text. */
function sections(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of text.split(/^## /m).slice(1)) {
    const [heading = '', ...body] = part.split('\n');
    found.set(heading.trim(), body.join('\n'));
  }
  return found;
}

function sectionStarting(all: Map<string, string>, start: string): string {
  const match = [...all.entries()].find(([heading]) => heading.startsWith(start));
  assert.ok(match !== undefined, `docs/privacy.md has a section "${start}..."`);
  return match[1];
}

/** The tables each domain's closing code deletes from, by domain. */
async function deletedTables(): Promise<Map<string, string[]>> {
  const byDomain = new Map<string, string[]>();
  for (const entry of await readdir(path.join(ROOT, 'src'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = path.join(ROOT, 'src', entry.name, 'account-closure.ts');
    const code = await readFile(file, 'utf8').catch(() => null);
    if (code === null) continue;
    byDomain.set(
      entry.name,
      [...code.matchAll(/deleteFrom\('([a-z_]+)'\)/g)].map((m) => m[1]!),
    );
  }
  return byDomain;
}

describe('docs/privacy.md says what closing an account does', () => {
  let doc: string;
  let parts: Map<string, string>;
  before(async () => {
    doc = await readFile(path.join(ROOT, 'docs', 'privacy.md'), 'utf8');
    parts = sections(doc);
  });

  it('names every table the closing deletes from, and every one the retention erases, where it says when', async () => {
    const byDomain = await deletedTables();
    assert.ok(byDomain.size >= 5, `the domains' closing code is found (${[...byDomain.keys()]})`);
    const deleted = sectionStarting(parts, 'Deleted when the account closes');
    const erased = sectionStarting(parts, 'Erased when');
    for (const [domain, tables] of byDomain) {
      const section = domain === 'kyc' ? erased : deleted;
      for (const table of tables) {
        assert.ok(
          section.includes(`\`${table}\``),
          `${domain} deletes from ${table}: the doc says so, and when`,
        );
      }
    }
  });

  it('names the records the law keeps, for RETENTION_YEARS, and the reasons and settings a person meets', () => {
    const kept = sectionStarting(parts, 'Kept');
    for (const table of [
      'ledger_entries',
      'vtu_transactions',
      'wallet_transfers',
      'kyc_submissions',
      'kyc_documents',
    ]) {
      assert.ok(kept.includes(`\`${table}\``), `${table} is kept`);
    }
    assert.match(kept, /RETENTION_YEARS/);
    for (const name of [
      'ACCOUNT_DELETION_GRACE_DAYS',
      'requestAccountDeletion',
      'cancelAccountDeletion',
      ...closureReasons,
    ]) {
      assert.ok(doc.includes(`\`${name}\``), `${name} is named`);
    }
  });
});
