import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  isArrayLiteralExpression,
  isCallExpression,
  isIdentifier,
  isNoSubstitutionTemplateLiteral,
  isPropertyAccessExpression,
  isPropertySignatureDeclaration,
  isStringLiteral,
  isTaggedTemplateExpression,
  isTemplateExpression,
  isTypeAliasDeclaration,
  isTypeLiteralNode,
  type Node,
  type SourceFile,
} from 'typescript/unstable/ast';
import { API, type Project } from 'typescript/unstable/sync';

// No module reaches into another's tables (DESIGN.md, "Layout"): it calls that module's api. Every
// table has one owner, the folder whose code may name it in SQL; this test reads the code of every
// domain, the ledger and the jobs with the TypeScript compiler and fails on a table named by code
// outside its owner, saying which file, which table and whose it is.
//
// A table is named where Kysely is handed it (selectFrom, insertInto, updateTable, deleteFrom,
// mergeInto, the joins, from and using) and in raw SQL (sql`...`, statement(...)`...`) after FROM,
// JOIN, UPDATE, INTO or USING. Common table expressions (with) are names of the query's own, not tables.
//
// TypeScript 7's compiler API is published as `typescript/unstable/*`: should an update change it,
// the parse is the only part to adapt (swc, a devDependency, parses the same TypeScript).

/** The owner of every table: the folder under src/ whose code may name it. */
const owners: Record<string, string> = {
  // Accounts, sign-in and sessions.
  users: 'auth',
  otp_codes: 'auth',
  sessions: 'auth',
  access_tokens: 'auth',
  refresh_tokens: 'auth',
  known_devices: 'auth',
  email_verifications: 'auth',
  // An administrator's second factor (TOTP), beside the sessions it verifies.
  admin_totp: 'auth',
  // The append-only record of every admin operation.
  audit_log: 'audit',
  // The HTTP edge: a POST's Idempotency-Key and its stored answer.
  idempotency_keys: 'http',
  // Double-entry postings and balances.
  ledger_accounts: 'ledger',
  ledger_transactions: 'ledger',
  ledger_entries: 'ledger',
  ledger_checks: 'ledger',
  ledger_checkpoint: 'ledger',
  ledger_check_accounts: 'ledger',
  ledger_check_open_postings: 'ledger',
  // The figures /metrics serves, as the refresh job last read them (decision 0028).
  operator_figures: 'figures',
  kyc_documents: 'kyc',
  kyc_submissions: 'kyc',
  kyc_liveness_checks: 'kyc',
  topup_intents: 'funding',
  payment_events: 'funding',
  dedicated_accounts: 'funding',
  dedicated_account_claims: 'funding',
  float_top_ups: 'funding',
  reconcile_cursors: 'funding',
  ops_alerts: 'alerts',
  vtu_transactions: 'vtu',
  vtu_float_reservations: 'vtu',
  vtu_provider_rate: 'vtu',
  vtu_markups: 'catalogue',
  savings_locks: 'savings',
  savings_milestones: 'growth',
  checkin_claims: 'growth',
  referral_bonuses: 'growth',
  notifications: 'notifications',
  notification_settings: 'notifications',
  broadcasts: 'notifications',
  polls: 'notifications',
  poll_options: 'notifications',
  poll_votes: 'notifications',
  push_subscriptions: 'push',
  wallet_transfers: 'transfers',
  beneficiaries: 'beneficiaries',
  schedules: 'schedules',
  disputes: 'disputes',
  adjustments: 'adjustments',
  bulk_orders: 'bulk-orders',
  data_exports: 'data-export',
  // Each person's day of debits and own daily limit (CBN tier limits, decision 0044).
  account_limits: 'limits',
  // Operators' pauses of a service or of a service through a provider (decision 0042).
  service_pauses: 'pauses',
  // Reconciliation runs with the providers' records and their items (decision 0049).
  reconciliation_runs: 'reconciliation',
  reconciliation_items: 'reconciliation',
  // Requests to close an account, their grace period and the end of retention (decision 0047).
  account_closures: 'account-closure',
  // The USSD channel's sessions, the claim of each step, and the day's USSD payments (issue 44).
  ussd_sessions: 'ussd',
  ussd_steps: 'ussd',
  ussd_payments: 'ussd',
  // pg-boss's own tables (src/jobs/queue.ts puts them in the pgboss schema).
  'pgboss.bam': 'jobs',
  'pgboss.job': 'jobs',
  'pgboss.job_common': 'jobs',
  'pgboss.job_dependency': 'jobs',
  'pgboss.queue': 'jobs',
  'pgboss.queue_stats': 'jobs',
  'pgboss.schedule': 'jobs',
  'pgboss.subscription': 'jobs',
  'pgboss.version': 'jobs',
  'pgboss.warning': 'jobs',
};

const srcDir = path.resolve(import.meta.dirname, '..', '..', 'src');

/** The folders whose code is read: every domain (a folder with a module.ts), the ledger and the jobs. */
const scanned = [
  ...readdirSync(srcDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(srcDir, entry.name, 'module.ts')))
    .map((entry) => entry.name),
  'ledger',
  'jobs',
];

/** Kysely's methods that take a table (or a `table as alias`, or a list of them) first. */
const tableMethods = new Set([
  'selectFrom',
  'insertInto',
  'replaceInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
  'innerJoinLateral',
  'leftJoinLateral',
  'crossJoin',
]);
/** Methods that take a table first but share their name with others' (Array.from, Buffer.from). */
const ambiguousTableMethods = new Set(['from', 'using']);
/** Kysely's methods that name a common table expression first. */
const cteMethods = new Set(['with', 'withRecursive', 'withMaterialized', 'withNotMaterialized']);

const sqlTable =
  /\b(?:from|join|update|into|using)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)"?/gi;
const sqlCte =
  /(?:\bwith(?:\s+recursive)?|,)\s+([a-z_][a-z0-9_]*)\s+as\s+(?:not\s+)?(?:materialized\s+)?\(/gi;

type Use = { file: string; line: number; table: string; how: string };

/** A Kysely table argument's names, without their aliases; [] when it is not written out. */
function literalNames(node: Node): string[] {
  if (isStringLiteral(node) || isNoSubstitutionTemplateLiteral(node)) {
    return [
      node.text
        .trim()
        .split(/\s+as\s+/i)[0]!
        .trim(),
    ];
  }
  if (isArrayLiteralExpression(node)) return node.elements.flatMap(literalNames);
  return [];
}

/** The text of a tagged template, with each ${} as a placeholder. */
function templateText(node: Node): string | undefined {
  if (isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (isTemplateExpression(node)) {
    return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' $? ');
  }
  return undefined;
}

/** Every table named in a file, and the common table expressions it defines (not tables). */
function usesIn(sourceFile: SourceFile, file: string): { uses: Use[]; ctes: Set<string>; unknown: Use[] } {
  const uses: Use[] = [];
  const unknown: Use[] = [];
  const ctes = new Set<string>();
  const lineOf = (node: Node) => sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
  const named = (node: Node, names: string[], how: string, strict: boolean) => {
    for (const table of names) {
      const use = { file, line: lineOf(node), table, how };
      if (table in owners) uses.push(use);
      else if (strict) unknown.push(use);
    }
  };
  const visit = (node: Node): void => {
    if (
      isCallExpression(node) &&
      isPropertyAccessExpression(node.expression) &&
      isIdentifier(node.expression.name)
    ) {
      const method = node.expression.name.text;
      const first = node.arguments[0];
      if (first !== undefined) {
        if (cteMethods.has(method)) for (const name of literalNames(first)) ctes.add(name);
        else if (tableMethods.has(method)) {
          // A table held in a variable could be anyone's: written out, the check can see whose it is.
          if (isIdentifier(first) || isPropertyAccessExpression(first)) {
            unknown.push({ file, line: lineOf(first), table: first.getText(sourceFile), how: method });
          } else named(first, literalNames(first), method, true);
        } else if (ambiguousTableMethods.has(method)) named(first, literalNames(first), method, false);
      }
    }
    if (isTaggedTemplateExpression(node)) {
      const text = templateText(node.template);
      if (text !== undefined) {
        for (const match of text.matchAll(sqlCte)) ctes.add(match[1]!.toLowerCase());
        const tables = [...text.matchAll(sqlTable)].map((match) => match[1]!.toLowerCase());
        named(node, tables, 'sql', false);
      }
    }
    node.forEachChild(visit);
  };
  visit(sourceFile);
  return { uses, ctes, unknown: unknown.filter((use) => !ctes.has(use.table)) };
}

/** The tables of the database's type (src/db/schema.ts, `type DB = { ... }`). */
function schemaTables(sourceFile: SourceFile): string[] {
  const db = sourceFile.statements.find((s) => isTypeAliasDeclaration(s) && s.name.text === 'DB');
  assert.ok(
    db !== undefined && isTypeAliasDeclaration(db) && isTypeLiteralNode(db.type),
    'type DB = { ... }',
  );
  return db.type.members.flatMap((member) =>
    isPropertySignatureDeclaration(member) && isIdentifier(member.name) ? [member.name.text] : [],
  );
}

describe("a domain's SQL names only the tables it owns", () => {
  let api: API;
  let project: Project;
  let configDir: string;
  let files: string[];

  before(async () => {
    files = [];
    for (const folder of scanned) {
      const entries = await readdir(path.join(srcDir, folder), { recursive: true });
      files.push(...entries.filter((f) => f.endsWith('.ts')).map((f) => path.join(srcDir, folder, f)));
    }
    // A program of these files alone, each parsed without following its imports: the test reads
    // syntax, and loading the whole project with its packages' types takes ten times as long.
    configDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-table-owners-'));
    const config = {
      compilerOptions: {
        noResolve: true,
        noLib: true,
        types: [],
        allowImportingTsExtensions: true,
        noEmit: true,
      },
      files: [...files, path.join(srcDir, 'db', 'schema.ts')],
    };
    await writeFile(path.join(configDir, 'tsconfig.json'), JSON.stringify(config));
    api = new API({ cwd: configDir });
    const [opened] = api
      .updateSnapshot({ openProjects: [path.join(configDir, 'tsconfig.json')] })
      .getProjects();
    assert.ok(opened !== undefined, 'the TypeScript project opened');
    project = opened;
  });
  after(async () => {
    api?.close();
    if (configDir !== undefined) await rm(configDir, { recursive: true, force: true });
  });

  const sourceFile = (file: string): SourceFile => {
    const parsed = project.program.getSourceFile(file);
    assert.ok(parsed !== undefined, `${file} is parsed`);
    return parsed;
  };
  const scan = () =>
    files.map((file) =>
      usesIn(sourceFile(file), path.relative(path.dirname(srcDir), file).split(path.sep).join('/')),
    );

  it('gives every table of src/db/schema.ts an owner, and pg-boss’s tables to jobs/', () => {
    const tables = schemaTables(sourceFile(path.join(srcDir, 'db', 'schema.ts')));
    assert.ok(tables.length >= 30, `${tables.length} tables in type DB`);
    assert.deepEqual(
      Object.keys(owners)
        .filter((table) => !table.startsWith('pgboss.'))
        .sort(),
      [...tables].sort(),
      'the ownership map lists exactly the tables of type DB',
    );
    for (const owner of new Set(Object.values(owners))) {
      assert.ok(scanned.includes(owner) || owner === 'http', `${owner}/ is a folder the test knows`);
    }
  });

  it('finds the tables the code names, and no name it cannot place', () => {
    const results = scan();
    const uses = results.flatMap((r) => r.uses);
    // Not vacuous: the domains name their tables hundreds of times between them.
    assert.ok(uses.length > 50, `${uses.length} table uses found`);
    assert.ok(new Set(uses.map((u) => u.table)).size >= 25, 'most tables are named somewhere');
    assert.ok(
      uses.some((u) => u.how === 'sql'),
      'tables named in raw SQL are found too',
    );
    const unknown = results.flatMap((r) => r.unknown).map((u) => `${u.file}:${u.line} ${u.how}: ${u.table}`);
    assert.deepEqual(
      unknown,
      [],
      'every name handed to Kysely as a table is a table of the map or a with-query',
    );
  });

  it('has no code naming a table another folder owns', () => {
    const foreign = scan()
      .flatMap((r) => r.uses)
      .filter((use) => owners[use.table] !== use.file.split('/')[1]);
    const byFileAndTable = new Map<string, number[]>();
    for (const use of foreign) {
      const key = `${use.file} names ${use.table} (owned by ${owners[use.table]}/)`;
      byFileAndTable.set(key, [...(byFileAndTable.get(key) ?? []), use.line]);
    }
    const report = [...byFileAndTable].map(
      ([key, lines]) => `${key}, line ${[...new Set(lines)].join(', ')}`,
    );
    assert.deepEqual(report, [], `${report.length} uses of another folder's table:\n${report.join('\n')}`);
  });
});
