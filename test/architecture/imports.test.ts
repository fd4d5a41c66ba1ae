import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';

// `npm run check:imports` holds src/ to DESIGN.md's layout with dependency-cruiser
// (.dependency-cruiser.cjs). A checker that reads nothing finds nothing wrong, so these tests hold
// the checker itself: on a small tree that breaks each rule once, it names exactly those breaks,
// type-only imports included; on src/ it sees every file and its imports.

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

async function projectOptions(): Promise<ICruiseOptions> {
  return extractDepcruiseOptions(path.join(repoRoot, '.dependency-cruiser.cjs'));
}

async function cruised(baseDir: string): Promise<ICruiseResult> {
  const { output } = await cruise(['src'], { ...(await projectOptions()), baseDir });
  assert.equal(typeof output, 'object', 'a cruise result, not a report');
  return output as ICruiseResult;
}

/** Each violation as "rule: from -> to" (a cycle names the module it was found from and the next). */
const violations = (result: ICruiseResult): string[] =>
  result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();

const tree: Record<string, string> = {
  // A domain reaching for Fastify, with a type-only import.
  'src/auth/routes.ts':
    "import type { FastifyInstance } from 'fastify';\nexport type App = FastifyInstance;\n",
  // A cycle made of types alone: an import type one way, an export type ... from the other.
  'src/wallet/view.ts': "import type { Row } from './row.ts';\nexport type View = { row?: Row };\n",
  'src/wallet/row.ts':
    "export type { View } from './view.ts';\nimport type { View } from './view.ts';\nexport type Row = { view?: View };\n",
  'src/wallet/typo.ts': "export { nothing } from './missing.ts';\n",
  // The ledger reading a domain's type.
  'src/ledger/postings.ts': "import type { Price } from '../vtu/price.ts';\nexport type Cost = Price;\n",
  'src/vtu/price.ts':
    "import { http } from '../http/router.ts';\nexport type Price = bigint;\nexport const p = http;\n",
  // A domain past another's door (a type-only import counts), beside one through it: module.ts for
  // the types, schemas.ts for the shapes.
  'src/wallet/spend.ts': "import type { Price } from '../vtu/price.ts';\nexport type Spend = Price;\n",
  'src/wallet/door.ts':
    "import type { VtuApi } from '../vtu/module.ts';\nimport { buyInput } from '../vtu/schemas.ts';\nexport const door = (api?: VtuApi) => [api, buyInput];\n",
  // A domain calling another's factory itself, past the composition root.
  'src/wallet/factory.ts':
    "import { createVtuModule } from '../vtu/module.ts';\nexport const vtu = createVtuModule;\n",
  'src/vtu/module.ts': 'export type VtuApi = { buy(): void };\nexport const createVtuModule = () => ({});\n',
  'src/vtu/schemas.ts': 'export const buyInput = {};\n',
  // An adapter reaching for its simulator.
  'src/providers/sms.ts': "import { fake } from '../sandbox/sms.ts';\nexport const sms = fake;\n",
  // The simulator reaching into the service.
  'src/sandbox/sms.ts':
    "import type { Context } from '../context.ts';\nexport const fake = (ctx?: Context) => ctx;\n",
  // A simulator borrowing an adapter's reading of the wire; the mailer alone is shared.
  'src/sandbox/bills.ts': "import { sms } from '../providers/sms.ts';\nexport const bills = sms;\n",
  'src/sandbox/mailbox.ts':
    "import { mailer } from '../providers/email/mailer.ts';\nexport const box = mailer;\n",
  'src/providers/email/mailer.ts': 'export const mailer = {};\n',
  'src/http/router.ts':
    "import type { Context } from '../context.ts';\nexport const http = (ctx?: Context) => ctx;\n",
  // The composition root and the process may see all of it.
  'src/context.ts': 'export type Context = { now: Date };\n',
  'src/main.ts':
    "import type { Context } from './context.ts';\nimport { fake } from './sandbox/sms.ts';\nexport const run = (ctx: Context) => [ctx, fake];\n",
  'src/app.ts': "import type { Context } from './context.ts';\nexport const build = (ctx: Context) => ctx;\n",
  'node_modules/fastify/package.json': JSON.stringify({
    name: 'fastify',
    version: '5.0.0',
    main: 'fastify.js',
  }),
  'node_modules/fastify/fastify.js': 'module.exports = {};\n',
};

describe('the import rules (.dependency-cruiser.cjs)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-imports-'));
    for (const [file, text] of Object.entries(tree)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('names every break of a small tree, type-only imports included, and nothing else', async () => {
    assert.deepEqual(violations(await cruised(dir)), [
      'context-from-roots-only: src/http/router.ts -> src/context.ts',
      'context-from-roots-only: src/sandbox/sms.ts -> src/context.ts',
      'domain-not-http: src/auth/routes.ts -> node_modules/fastify/fastify.js',
      'domain-not-http: src/vtu/price.ts -> src/http/router.ts',
      'ledger-alone: src/ledger/postings.ts -> src/vtu/price.ts',
      'no-circular: src/wallet/row.ts -> src/wallet/view.ts',
      'one-door-types: src/wallet/factory.ts -> src/vtu/module.ts',
      'one-door: src/wallet/spend.ts -> src/vtu/price.ts',
      'providers-alone: src/providers/sms.ts -> src/sandbox/sms.ts',
      'resolvable: src/wallet/typo.ts -> ./missing.ts',
      'sandbox-apart-from-adapters: src/sandbox/bills.ts -> src/providers/sms.ts',
      'sandbox-from-composition-only: src/providers/sms.ts -> src/sandbox/sms.ts',
      'sandbox-over-http: src/sandbox/sms.ts -> src/context.ts',
    ]);
  });

  it('reads every file of src/ and its imports, type-only ones too', async () => {
    const result = await cruised(repoRoot);
    const files = (await readdir(path.join(repoRoot, 'src'), { recursive: true }))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `src/${file.split(path.sep).join('/')}`);
    const modules = new Set(result.modules.map((m) => m.source));
    assert.deepEqual(
      files.filter((file) => !modules.has(file)),
      [],
      'every .ts file under src/ is a module of the cruise',
    );
    const local = result.modules.flatMap((m) => m.dependencies.filter((d) => d.resolved.startsWith('src/')));
    assert.ok(local.length > 500, `${local.length} imports between files of src/`);
    const typeOnly = local.filter((d) => d.dependencyTypes.includes('type-only'));
    assert.ok(typeOnly.length > 50, `${typeOnly.length} type-only imports between files of src/`);
  });
});
