import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { serviceDocument } from '../../web/tools/api-types.ts';

// The runbook (docs/operations.md) names only tools that exist (issue 40, item 7): an operator in an
// incident follows it to the letter, and a step naming an operation the service does not serve, a
// script package.json does not have or a screen the web client does not show is a step nobody can
// take. Every backticked name that reads as an operation is looked up in the service's own
// /openapi.json (read from an in-memory sandbox service, as the web client's types are), with its
// method when the runbook says GET or POST; every `npm run x` in package.json's scripts; every
// *Admin → Screen* among the admin home's screens; every alert's runbook anchor in the document.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const readRepoFile = (file: string) => readFile(path.join(ROOT, file), 'utf8');

/**
 * The operations the incident sections must use: what API.md section 17.4 gives operators, and the
 * reconciliation and ledger check they already had. A runbook without them has no incident tools.
 */
const incidentTools = [
  'adminVerifyTotp',
  'adminListAuditLog',
  'adminFreezeUser',
  'adminUnfreezeUser',
  'adminRevokeSessions',
  'adminProposeAdjustment',
  'adminApproveAdjustment',
  'adminListAdjustments',
  'adminPauseService',
  'adminResumeService',
  'adminListPauses',
  'adminReconcile',
  'adminLedgerCheck',
  'adminListAlerts',
  // Issue 40: a person from a phone, what left their wallet, and why purchases fail, without SQL.
  'adminGetUser',
  'adminListPurchases',
  // Issue 40: an admin's lost authenticator, reset by another admin rather than by SQL.
  'adminResetTotp',
];

type Reference = { name: string; method: 'GET' | 'POST' | undefined; line: number };

/** The document without its fenced code blocks (their backticks are not inline code). */
function withoutFences(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/**
 * Every backticked span that starts with a camelCase name whose first word is one the operations
 * start with (`admin`, `get`, `list`, `set`, `request`, ...: taken from the document itself, so a
 * new verb counts as soon as an operation has it), with the method written before it, if any.
 * Field names (`errorId`, `createdAt`) start with no such word and are not taken for operations.
 */
function operationReferences(text: string, verbs: ReadonlySet<string>): Reference[] {
  const references: Reference[] = [];
  for (const span of withoutFences(text).matchAll(/`([^`\n]+)`/g)) {
    const named = /^(?:(GET|POST) )?([a-z][a-z0-9]*)([A-Z]\w*)/.exec(span[1]!);
    if (named === null || !verbs.has(named[2]!)) continue;
    references.push({
      name: named[2]! + named[3]!,
      method: named[1] as Reference['method'],
      line: lineOf(text, span.index),
    });
  }
  return references;
}

describe('docs/operations.md names only tools that exist', () => {
  let runbook: string;
  /** Each operation the service serves, with its HTTP method. */
  let operations: Map<string, 'GET' | 'POST'>;
  let references: Reference[];

  before(async () => {
    runbook = await readRepoFile('docs/operations.md');
    const document = await serviceDocument();
    operations = new Map();
    for (const [route, methods] of Object.entries(document.paths as Record<string, object>)) {
      if (!route.startsWith('/_serverFn/')) continue;
      operations.set(route.slice('/_serverFn/'.length), 'get' in methods ? 'GET' : 'POST');
    }
    const verbs = new Set([...operations.keys()].map((name) => /^[a-z][a-z0-9]*/.exec(name)![0]));
    references = operationReferences(runbook, verbs);
  });

  it('every operation it names is served, with the method it says', { timeout: 120_000 }, () => {
    const wrong: string[] = [];
    for (const { name, method, line } of references) {
      const served = operations.get(name);
      if (served === undefined) wrong.push(`line ${line}: ${name} is not an operation of /openapi.json`);
      else if (method !== undefined && method !== served)
        wrong.push(`line ${line}: ${method} ${name}, but the service answers it on ${served}`);
    }
    assert.deepEqual(wrong, [], `the runbook names tools that do not exist:\n${wrong.join('\n')}`);
  });

  it("names the operators' incident tools", () => {
    const named = new Set(references.map((r) => r.name));
    assert.deepEqual(
      incidentTools.filter((tool) => !named.has(tool)),
      [],
      'the incident sections do not use these operations',
    );
  });

  it('every npm script it names is in package.json', async () => {
    const { scripts } = JSON.parse(await readRepoFile('package.json')) as {
      scripts: Record<string, string>;
    };
    const named = [...runbook.matchAll(/\bnpm (?:run ([\w:.-]+)|(start|test)\b)/g)].map((m) => ({
      script: (m[1] ?? m[2])!,
      line: lineOf(runbook, m.index),
    }));
    assert.ok(
      named.some((n) => n.script === 'ledger:check'),
      'the runbook names npm run ledger:check',
    );
    const missing = named
      .filter((n) => !(n.script in scripts))
      .map((n) => `line ${n.line}: npm run ${n.script}`);
    assert.deepEqual(missing, [], `scripts package.json does not have:\n${missing.join('\n')}`);
  });

  it('every admin screen it names is on the admin home', async () => {
    const home = await readRepoFile('web/src/routes/admin/index.tsx');
    const labels = new Set([...home.matchAll(/\blabel:\s*(['"])(.*?)\1/g)].map((m) => m[2]!));
    const named = [...runbook.matchAll(/\*Admin →\s+([^*]+)\*/g)].map((m) => ({
      screen: m[1]!.replace(/\s+/g, ' '),
      line: lineOf(runbook, m.index),
    }));
    assert.ok(named.length > 0, 'the runbook names the admin screens as *Admin → Screen*');
    const missing = named
      .filter((n) => !labels.has(n.screen))
      .map((n) => `line ${n.line}: Admin → ${n.screen}`);
    assert.deepEqual(
      missing,
      [],
      `screens the admin home does not link (it has ${[...labels].join(', ')}):\n${missing.join('\n')}`,
    );
  });

  it("every alert's runbook link and every link within it lands on a section", async () => {
    const anchors = new Set([...runbook.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));
    const rules = await readRepoFile('ops/prometheus/alerts.yml');
    const targets = [
      ...[...rules.matchAll(/runbook: docs\/operations\.md#([\w-]+)/g)].map((m) => `alerts.yml: #${m[1]}`),
      ...[...runbook.matchAll(/\]\(#([\w-]+)\)/g)].map((m) => `line ${lineOf(runbook, m.index)}: #${m[1]}`),
    ];
    assert.ok(targets.length > 0);
    const missing = targets.filter((t) => !anchors.has(t.slice(t.indexOf('#') + 1)));
    assert.deepEqual(missing, [], `links to no <a id> of docs/operations.md:\n${missing.join('\n')}`);
  });
});
