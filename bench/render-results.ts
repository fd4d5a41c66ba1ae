import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ReportInput, writeReport } from './report.ts';

// `node bench/render-results.ts [results.json] [RESULTS.md]`: lays out again a results file that
// `npm run bench` wrote (bench/results/latest.json by default) as RESULTS.md, without running the
// bench: for a change to the report's layout, or a run whose JSON went elsewhere (BENCH_RESULTS_FILE).

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsFile = path.resolve(process.argv[2] ?? path.join(repoRoot, 'bench', 'results', 'latest.json'));
const reportFile = path.resolve(process.argv[3] ?? path.join(repoRoot, 'bench', 'RESULTS.md'));

const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as ReportInput;
if (results.selection === undefined || results.fastifyAnchor === undefined)
  throw new Error(`${resultsFile} was written before the bench recorded its anchors; run npm run bench`);
writeReport(reportFile, results);
process.stdout.write(
  `${path.relative(process.cwd(), reportFile)} from ${path.relative(process.cwd(), resultsFile)}\n`,
);
