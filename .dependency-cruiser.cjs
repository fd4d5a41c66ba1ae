// The shape of src/ (shared/DESIGN.md, "Layout"): no import cycle, and the boundaries between the
// domains, the ledger, the adapters, the sandbox and the composition root. `npm run check:imports`
// runs it over src/ and prints one line when everything holds.
//
// TypeScript 7 has no compiler API that dependency-cruiser can use yet, so files are parsed with
// swc (`parser: 'swc'`), which reads the TypeScript source itself: `import type` and
// `export type ... from` count as dependencies, and a cycle made only of types is a cycle.
// test/architecture/imports.test.ts proves both on a small tree, so that a parser that silently
// reads nothing cannot make this check pass.

const fs = require('node:fs');
const path = require('node:path');

/** The domain folders: those with a module.ts (DESIGN.md), so a new domain is held at once. */
const domains = fs
  .readdirSync(path.join(__dirname, 'src'), { withFileTypes: true })
  .filter(
    (entry) => entry.isDirectory() && fs.existsSync(path.join(__dirname, 'src', entry.name, 'module.ts')),
  )
  .map((entry) => entry.name);
const domain = `^src/(${domains.join('|')})/`;

/** Fastify and its plugins, as dependency-cruiser names a resolved package. */
const fastify = '^node_modules/(fastify|fastify-[^/]+|@fastify/[^/]+)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'src/ has no import cycle, type-only imports included (DESIGN.md, "Layout").',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-not-http',
      severity: 'error',
      comment: 'A domain never imports Fastify or src/http/: the router calls the domain, not the other way.',
      from: { path: domain },
      to: { path: [fastify, '^src/http/'] },
    },
    {
      name: 'one-door',
      severity: 'error',
      comment:
        'A domain reaches another only through the api its factory returns, given to it as a dep: from another domain it imports only module.ts (the types) and schemas.ts (CONTRIBUTING, "Add a domain").',
      from: { path: domain },
      to: { path: domain, pathNot: ['^src/$1/', '^src/[^/]+/(module|schemas)\\.ts$'] },
    },
    {
      name: 'one-door-types',
      severity: 'error',
      comment:
        "From another domain's module.ts, types only: its factory is for the composition root (src/modules.ts), and what the domain does is reached through the api that factory returns.",
      from: { path: domain },
      to: { path: '^src/[^/]+/module\\.ts$', pathNot: '^src/$1/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ledger-alone',
      severity: 'error',
      comment: 'src/ledger/ imports no domain and no adapter.',
      from: { path: '^src/ledger/' },
      to: { path: [domain, '^src/providers/', '^src/sandbox/'] },
    },
    {
      name: 'providers-alone',
      severity: 'error',
      comment: 'An adapter in src/providers/ imports no domain and never the sandbox.',
      from: { path: '^src/providers/' },
      to: { path: [domain, '^src/sandbox/'] },
    },
    {
      name: 'sandbox-from-composition-only',
      severity: 'error',
      comment: 'Only src/main.ts and src/context.ts import the sandbox (and the sandbox itself).',
      from: { path: '^src/', pathNot: ['^src/(main|context)\\.ts$', '^src/sandbox/'] },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'sandbox-over-http',
      severity: 'error',
      comment:
        'The sandbox reaches the service over HTTP, like the party it stands for: no domain, no ledger, no composition root.',
      from: { path: '^src/sandbox/' },
      to: { path: [domain, '^src/ledger/', '^src/context\\.ts$'] },
    },
    {
      name: 'sandbox-apart-from-adapters',
      severity: 'error',
      comment:
        "A simulator reads the wire format on its own, so that an adapter's mistake is not copied into the party it is tested against; only the mailer is shared (the sandbox's mailbox is one).",
      from: { path: '^src/sandbox/' },
      to: { path: '^src/providers/', pathNot: '^src/providers/email/' },
    },
    {
      name: 'context-from-roots-only',
      severity: 'error',
      comment: 'Only src/main.ts, src/app.ts and tests see the composed whole (src/context.ts).',
      from: { path: '^src/', pathNot: '^src/(main|app|context)\\.ts$' },
      to: { path: '^src/context\\.ts$' },
    },
    {
      name: 'resolvable',
      severity: 'error',
      comment: 'Every import resolves: one that does not is a typo, or a file the check could not see.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: 'swc',
    // swc reads the source before compilation whatever this says, so type-only imports count
    // (test/architecture/imports.test.ts); true would only add a warning that TypeScript 7 has no API
    // dependency-cruiser can use, to every run.
    tsPreCompilationDeps: false,
    // Packages are dependencies (Fastify's rule needs them), never cruised themselves.
    doNotFollow: { path: 'node_modules' },
    moduleSystems: ['es6'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    reporterOptions: {},
  },
};
