import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { serviceDocument } from '../web/tools/api-types.ts';

// `npm run lint:openapi` (part of `npm run verify`): the service's /openapi.json, built in memory
// without listening (the same document `npm run web:api` reads), linted by Redocly with its
// recommended rules and the stricter ones of redocly.yaml. Any error or warning fails the run.

const redocly = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const configPath = path.join(import.meta.dirname, '..', 'redocly.yaml');

type LintReport = {
  totals: { errors: number; warnings: number };
  problems: Array<{
    ruleId: string;
    severity: string;
    message: string;
    location: Array<{ pointer: string }>;
  }>;
};

const directory = await mkdtemp(path.join(os.tmpdir(), 'billrail-openapi-lint-'));
try {
  const file = path.join(directory, 'openapi.json');
  // The document names the server it is served from; built without one, it gets the default address.
  const document = { ...(await serviceDocument()), servers: [{ url: 'http://127.0.0.1:3000' }] };
  await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
  const run = spawnSync(
    process.execPath,
    [redocly, 'lint', file, '--config', configPath, '--format', 'json', '--max-problems', '10000'],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  if (run.error !== undefined) throw run.error;
  // Redocly fails a run on errors only; here a warning fails it too, so each problem is listed.
  let report: LintReport;
  try {
    report = JSON.parse(run.stdout) as LintReport;
  } catch {
    process.stderr.write(run.stderr);
    throw new Error(`redocly lint gave no report (exit ${run.status})`);
  }
  for (const problem of report.problems) {
    const where = problem.location[0]?.pointer ?? '';
    console.error(`${problem.severity} ${problem.ruleId} ${where}: ${problem.message}`);
  }
  const { errors, warnings } = report.totals;
  console.log(`redocly lint (recommended + redocly.yaml): ${errors} errors, ${warnings} warnings`);
  process.exitCode = errors + warnings === 0 && run.status === 0 ? 0 : 1;
} finally {
  await rm(directory, { recursive: true, force: true });
}
