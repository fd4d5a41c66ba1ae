import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { productionSecretNames, secretProblem } from '../../src/secret-rules.ts';
import {
  configEnvNames,
  gracefulStopMs,
  heapFlagsOf,
  nodeOptionsOf,
  npmScript,
  parseEnvFile,
  ROOT,
  readRepoFile,
  sandboxSecrets,
} from './support.ts';

// The systemd units of deploy/ and the production settings they read, checked as files (and by
// systemd-analyze verify where the machine has it): node itself as the process (npm would not
// pass SIGTERM on), a stop timeout above the graceful stop, a user other than root, the hardening,
// and an env example the service's own parser accepts as a production configuration.

const UNITS = { api: 'deploy/billrail.service', worker: 'deploy/billrail-worker@.service' } as const;

/** A unit file's settings by section; a key set twice keeps both values, in order. */
function parseUnit(file: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | undefined;
  for (const line of readRepoFile(file).split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] = {};
      continue;
    }
    const setting = /^(\w+)=(.*)$/.exec(line);
    assert.ok(setting && current, `${file}: "${line}" is a setting inside a section`);
    const values = current[setting[1]!] ?? [];
    values.push(setting[2]!);
    current[setting[1]!] = values;
  }
  return sections;
}

function seconds(value: string): number {
  const match = /^(\d+)(s|min)?$/.exec(value);
  assert.ok(match, `a time span such as 90 or 90s: ${value}`);
  return Number(match[1]) * (match[2] === 'min' ? 60 : 1);
}

/** What `npm run secrets` prints, run as npm runs it (the pinned node on the script's file). */
function freshSecrets(): Record<string, string> {
  const [command, ...args] = npmScript('secrets').split(' ');
  assert.equal(command, 'node');
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return parseEnvFile(result.stdout);
}

describe('the systemd units', () => {
  for (const [role, file] of Object.entries(UNITS)) {
    it(`${role}: runs node src/main.ts itself, stops gracefully on SIGTERM and restarts`, () => {
      const service = parseUnit(file).Service!;
      const [binary, ...args] = service.ExecStart![0]!.split(/\s+/);
      assert.equal(path.basename(binary!), 'node', 'node is the main process, never npm');
      assert.deepEqual(args, role === 'worker' ? ['src/main.ts', '--worker-only'] : ['src/main.ts']);
      assert.deepEqual(service.KillSignal, ['SIGTERM']);
      assert.ok(
        seconds(service.TimeoutStopSec![0]!) * 1000 > gracefulStopMs(),
        `TimeoutStopSec above the graceful stop (${gracefulStopMs()} ms)`,
      );
      assert.ok(['always', 'on-failure'].includes(service.Restart![0]!));
      assert.deepEqual(service.EnvironmentFile, ['/etc/billrail/billrail.env']);
      assert.ok(service.WorkingDirectory !== undefined);
      if (role === 'api') assert.match(service.Environment!.join(' '), /\bWORKER=0\b/);
      assert.deepEqual(nodeOptionsOf(service.Environment!), heapFlagsOf(npmScript('start')));
    });

    it(`${role}: runs as a user other than root, writing its state directory alone`, () => {
      const service = parseUnit(file).Service!;
      assert.ok(service.User !== undefined && !['root', '0'].includes(service.User[0]!), 'User=');
      for (const [key, value] of [
        ['NoNewPrivileges', 'yes'],
        ['ProtectSystem', 'strict'],
        ['ProtectHome', 'yes'],
        ['PrivateTmp', 'yes'],
        ['CapabilityBoundingSet', ''],
      ] as const)
        assert.deepEqual(service[key], [value], `${key}=${value}`);
      // ProtectSystem=strict leaves the process only its StateDirectory to write: DATA_DIR is it.
      const dataDir = /\bDATA_DIR=(\S+)/.exec(service.Environment!.join(' '))?.[1];
      assert.equal(dataDir, `/var/lib/${service.StateDirectory![0]}`);
      assert.equal(service.MemoryDenyWriteExecute, undefined, "V8's JIT needs writable code pages");
    });
  }

  it("gives every process a metrics port of its own: the API its unit's, each worker its instance name", () => {
    const metricsPortOf = (file: string) =>
      /\bMETRICS_PORT=(\S+)/.exec(parseUnit(file).Service!.Environment!.join(' '))?.[1];
    const apiPort = metricsPortOf(UNITS.api);
    assert.match(apiPort ?? '', /^\d+$/, 'the API unit names its port');
    assert.equal(loadConfig({ METRICS_PORT: apiPort }).http.metricsPort, Number(apiPort));
    // billrail-worker@9101 listens on 9101: two instances can never share a port.
    assert.equal(metricsPortOf(UNITS.worker), '%i', "a worker's port is its instance name");
    const example = parseEnvFile(readRepoFile('deploy/billrail.env.example'));
    // systemd lets EnvironmentFile= override Environment=: a port in the env file would be every
    // process's, and all but the first would fail to bind.
    assert.equal(example.METRICS_PORT, undefined, 'billrail.env.example must not set METRICS_PORT');
    assert.notEqual(apiPort, example.PORT, '/metrics is not on the port the load balancer publishes');
    assert.ok(example.METRICS_TOKEN !== undefined, 'the scrapes need a token in production');
  });

  const systemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
  const scratch: string[] = [];
  after(async () => {
    for (const dir of scratch) await rm(dir, { recursive: true, force: true });
  });

  it('passes systemd-analyze verify with no warning', {
    skip: !systemdAnalyze && 'no systemd-analyze',
  }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-units-'));
    scratch.push(dir);
    const files = [];
    for (const file of Object.values(UNITS)) {
      const copy = path.join(dir, path.basename(file));
      await writeFile(copy, readRepoFile(file));
      files.push(copy);
    }
    const result = spawnSync('systemd-analyze', ['verify', ...files], { encoding: 'utf8' });
    // A machine without Node at ExecStart's path says so; that is the machine, not the unit.
    const warnings = result.stderr
      .split('\n')
      .filter((line) => line.trim() !== '' && !/Command \S+ is not executable/.test(line));
    assert.deepEqual(warnings, []);
    assert.equal(result.status, 0);
  });

  it('systemd-analyze verify would see a broken unit', {
    skip: !systemdAnalyze && 'no systemd-analyze',
  }, async () => {
    // The check above is worth something only if verify speaks up: a misspelt key, a bad value.
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-units-'));
    scratch.push(dir);
    const broken = path.join(dir, 'broken.service');
    await writeFile(broken, readRepoFile(UNITS.api).replace('Restart=always', 'Restart=sometimes'));
    const result = spawnSync('systemd-analyze', ['verify', broken], { encoding: 'utf8' });
    assert.match(result.stderr, /restart specifier/);
  });
});

describe('deploy/billrail.env.example', () => {
  const env = parseEnvFile(readRepoFile('deploy/billrail.env.example'));

  it('is refused as it stands, naming a placeholder secret', () => {
    const names = configEnvNames();
    for (const key of Object.keys(env)) assert.ok(names.has(key), `${key} is a setting of src/config.ts`);
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(
          error.message,
          new RegExp(`^invalid (${productionSecretNames.join('|')}): .*example value`),
        );
        return true;
      },
    );
  });

  it("is a production configuration the service accepts once npm run secrets' output and real keys replace its placeholders", () => {
    const printed = freshSecrets();
    // What npm run secrets does not make (the providers' keys): stand-ins of the shape they issue.
    const issued = Object.fromEntries(
      productionSecretNames
        .filter((name) => env[name] !== undefined && printed[name] === undefined)
        .map((name) => [name, `${name.toLowerCase()}_${randomBytes(24).toString('hex')}`]),
    );
    assert.ok(Object.keys(issued).length >= 8, "the providers' keys are placeholders too");
    // npm run secrets alone leaves them, and the example is still refused for them.
    assert.throws(
      () => loadConfig({ ...env, ...printed }),
      /invalid PAYMENT_SIGNING_SECRET: .*example value.*provider's dashboard/,
    );
    const config = loadConfig({ ...env, ...printed, ...issued });
    assert.equal(config.env, 'production');
    assert.equal(config.sandbox, false);
    assert.equal(config.database.url, env.DATABASE_URL, 'production runs on PostgreSQL');
    assert.equal(config.database.migrateOnStart, false, 'npm run migrate runs once per deploy');
    assert.equal(config.storage.kind, 's3', 'documents on S3: several machines serve');
    const secrets = sandboxSecrets();
    assert.notEqual(config.secrets.paymentSigning, secrets.signing);
    assert.notEqual(config.secrets.pepper, secrets.pepper);
  });

  it('sets nothing the units set themselves', () => {
    // systemd reads EnvironmentFile= after Environment=: a DATA_DIR here would move the process out
    // of its StateDirectory, the one place ProtectSystem=strict lets it write.
    for (const file of Object.values(UNITS)) {
      const unitEnvironment = parseUnit(file).Service!.Environment?.join(' ') ?? '';
      for (const key of Object.keys(env))
        assert.doesNotMatch(
          unitEnvironment,
          new RegExp(`\\b${key}=`),
          `${file} and the env file both set ${key}`,
        );
    }
  });
});

describe('npm run secrets', () => {
  it('prints a fresh set in env-file form, each value a setting that the production rules accept', () => {
    const first = freshSecrets();
    const names = configEnvNames();
    assert.deepEqual(
      Object.keys(first).sort(),
      [
        'ADMIN_TOTP_KEY',
        'METRICS_TOKEN',
        'SANDBOX_CLOCK_TOKEN',
        'SECRET_PEPPER',
        // The USSD gateway's callback path segment (API.md 17.6): ours to make, like the others.
        'USSD_CALLBACK_TOKEN',
        'VAPID_PRIVATE_KEY',
        'VAPID_PUBLIC_KEY',
      ].sort(),
    );
    for (const [name, value] of Object.entries(first)) {
      assert.ok(names.has(name), `${name} is a setting of src/config.ts`);
      if ((productionSecretNames as readonly string[]).includes(name))
        assert.equal(secretProblem(value), undefined, `${name}=${value}`);
    }
    const second = freshSecrets();
    for (const name of Object.keys(first))
      assert.notEqual(second[name], first[name], `${name} is drawn afresh`);
  });
});
