import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { knownExampleSecrets, productionSecretNames, secretProblem } from '../src/secret-rules.ts';

// The production image ships src/ alone, so the values the project prints in its other files are
// listed under src/ (decision 0026). This test keeps that list whole: every value any of those
// files gives a secret setting must be in it, or a copy-paste of the README would start in production.

const ROOT = path.resolve(import.meta.dirname, '..');

/** The files a value may be copied from: docs, examples, compose, deploy, CI, the soak and src. */
function scannedFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string, keep: (file: string) => boolean) => {
    for (const entry of readdirSync(path.join(ROOT, dir))) {
      const file = path.join(dir, entry);
      if (statSync(path.join(ROOT, file)).isDirectory()) walk(file, keep);
      else if (keep(file)) files.push(file);
    }
  };
  for (const entry of readdirSync(ROOT)) {
    if (/^(README|CONTRIBUTING)\.md$|^compose.*\.ya?ml$|^\.env|\.env\.example$|^Dockerfile$/.test(entry))
      files.push(entry);
  }
  walk('deploy', () => true);
  walk('docs', (file) => file.endsWith('.md'));
  walk('ops', () => true);
  walk('bench/soak', () => true);
  walk('.ci', () => true);
  walk('src', (file) => file.endsWith('.ts'));
  return files;
}

const nameAlternatives = productionSecretNames.join('|');
// NAME=value (env files, shells), NAME: value (YAML, TypeScript objects: a key starting its line), ${NAME:-value} and
// ${NAME-value} (compose's defaults), each value bare or quoted.
const forms = [
  new RegExp(`\\$\\{(${nameAlternatives}):?-([^}]*)\\}`, 'g'),
  new RegExp(`\\b(${nameAlternatives})=("[^"]*"|'[^']*'|[^\\s\`|]+)`, 'g'),
  // A key at the start of its line: in prose (a comment, a doc), "NAME: the token..." is no value.
  new RegExp(`^[ \\t-]*(${nameAlternatives}):[ \\t]+("[^"]*"|'[^']*'|[^\\s\`|,]+)`, 'gm'),
];
/** The sandbox simulators' credentials in src/: `export const SANDBOX_..._KEY = '...'`. */
const sandboxConstant = /^(?:export )?const (SANDBOX_[A-Z_]*(?:KEY|TOKEN|SECRET|PEPPER)) = '([^']+)';/gm;

/** Every literal value a scanned file gives a secret setting, with where it was found. */
export function givenSecretValues(file: string, text: string): Array<{ where: string; value: string }> {
  const found: Array<{ where: string; value: string }> = [];
  for (const form of forms) {
    for (const match of text.matchAll(form)) {
      let value = match[2]!;
      const quoted = /^(["'])(.*)\1$/.exec(value);
      // In TypeScript only a quoted literal is a value: `SECRET_PEPPER: randomBytes(...)` is code.
      if (file.endsWith('.ts') && quoted === null) continue;
      if (quoted !== null) value = quoted[2]!;
      // A shell or compose expansion names another variable, not a value (its default is matched
      // by the ${NAME:-value} form).
      if (value === '' || value.startsWith('$')) continue;
      found.push({ where: `${file}: ${match[0]}`, value });
    }
  }
  for (const match of text.matchAll(sandboxConstant))
    found.push({ where: `${file}: ${match[1]}`, value: match[2]! });
  return found;
}

describe('the known example secrets (src/secret-rules.ts)', () => {
  it("hold every value the project's files give a secret setting", () => {
    const files = scannedFiles();
    assert.ok(files.includes('README.md') && files.includes('deploy/billrail.env.example'), 'files found');
    const given = files.flatMap((file) =>
      givenSecretValues(file, readFileSync(path.join(ROOT, file), 'utf8')),
    );
    // The scan finds the env example's, compose's and the sandbox's values: far fewer means it broke.
    assert.ok(given.length >= 20, `values found: ${given.length}`);
    const missing = given.filter(({ value }) => !knownExampleSecrets.has(value));
    assert.deepEqual(missing, [], 'add these to knownExampleSecrets');
  });

  it('the scan reads each form', () => {
    const given = (file: string, text: string) => givenSecretValues(file, text).map((g) => g.value);
    assert.deepEqual(given('x.env', 'SECRET_PEPPER=abc\nSMS_API_KEY="q r"\n'), ['abc', 'q r']);
    assert.deepEqual(given('c.yaml', `  SECRET_PEPPER: $\{SECRET_PEPPER:-demo}\n  BILLS_API_KEY: plain\n`), [
      'demo',
      'plain',
    ]);
    assert.deepEqual(given('a.ts', "  SECRET_PEPPER: 'lit',\n  SMS_API_KEY: random(),"), ['lit']);
    assert.deepEqual(given('p.yml', '# the METRICS_TOKEN: the bearer token'), []);
    assert.deepEqual(given('b.md', 'export SANDBOX_CLOCK_TOKEN=$(openssl rand -base64 24)'), []);
    assert.deepEqual(given('s.ts', "export const SANDBOX_SMS_API_KEY = 'k';"), ['k']);
  });
});

describe('secretProblem', () => {
  it('refuses a known example, naming that rule', () => {
    for (const value of knownExampleSecrets) assert.match(secretProblem(value)!, /example value/);
  });

  it('refuses a value shorter than 32 characters', () => {
    assert.match(secretProblem('Zx8#kq2LmP0vWc7NtR4bYh1JsD9fG3a')!, /shorter than 32/); // 31
    assert.equal(secretProblem('Zx8#kq2LmP0vWc7NtR4bYh1JsD9fG3aE'), undefined); // 32
  });

  it('refuses a value of fewer than 16 distinct characters (10 for hex)', () => {
    assert.match(secretProblem('abcdefghijklmno'.repeat(3))!, /15 distinct characters, fewer than 16/);
    assert.equal(secretProblem('abcdefghijklmnop'.repeat(2)), undefined);
    assert.match(secretProblem('0123456780'.repeat(4))!, /9 distinct characters, fewer than 10 for hex/);
    // A real 32-digit hex key (VTpass's, an SMM panel's) rarely shows all 16 digits.
    assert.equal(secretProblem('9f3c1a7e5b2d8c4f6a0e1b3d5f7a9c2e'), undefined);
    assert.match(secretProblem('a'.repeat(64))!, /1 distinct characters/);
  });
});
