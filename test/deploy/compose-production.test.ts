import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { knownExampleSecrets, productionSecretNames } from '../../src/secret-rules.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  type ComposeService,
  configEnvNames,
  connectionsPerProcess,
  gracefulStopMs,
  migrateConnections,
  npmScript,
  parseEnvFile,
  ROOT,
  readRepoFile,
  runCaddy,
} from './support.ts';

// compose.production.yaml, its env example, deploy/Caddyfile.production and the Prometheus
// configuration it runs, checked as files against src/config.ts (CI has no Docker engine). What is
// checked is what would break production without a word, or open it: a setting the parser drops, a
// required one missing, a secret with a default, the sandbox on, migrations through the pooler,
// more connections than PgBouncer or PostgreSQL take, /metrics forwarded to the internet, and a
// Prometheus that scrapes ports where nothing listens.

type Compose = {
  services: Record<string, ComposeService>;
  secrets?: Record<string, { environment?: string; file?: string }>;
};

const FILE = 'compose.production.yaml';
const ENV_EXAMPLE = 'deploy/compose.production.env.example';
const source = readRepoFile(FILE);
const compose = parse(source, { merge: true }) as Compose;
const services = compose.services;

/** What the operator's .env holds (the compose file's header names each), as a deploy would give it. */
const dotEnv: Record<string, string> = {
  BILLRAIL_VERSION: '2026.11.28',
  BILLRAIL_DOMAIN: 'pay.example.ng',
  POSTGRES_PASSWORD: randomBytes(32).toString('hex'),
  METRICS_TOKEN: randomBytes(32).toString('hex'),
};

/** A value as compose gives it with that .env: every ${NAME:?message} filled in. */
function interpolated(value: string): string {
  return value.replace(/\$\{([A-Z_][A-Z0-9_]*)([^}]*)\}/g, (whole, name: string, rest: string) => {
    assert.match(rest, /^:\?\S/, `${whole}: required (:?message), never a default`);
    assert.ok(name in dotEnv, `${whole}: a name of .env`);
    return dotEnv[name]!;
  });
}

function environmentOf(name: string): Record<string, string> {
  const environment = services[name]?.environment ?? {};
  for (const [key, value] of Object.entries(environment))
    assert.equal(typeof value, 'string', `${name}: ${key} is quoted (a string, as the process reads it)`);
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, interpolated(value)]));
}

const example = parseEnvFile(readRepoFile(ENV_EXAMPLE));
/** The example as an operator fills it in: every REPLACE_ME a fresh random value. */
const filledIn = Object.fromEntries(
  Object.entries(example).map(([key, value]) => [
    key,
    value.replaceAll('REPLACE_ME', () => randomBytes(24).toString('base64url')),
  ]),
);

const byCommand = (...command: string[]) =>
  Object.keys(services).filter(
    (name) => JSON.stringify(services[name]!.command) === JSON.stringify(['node', ...command]),
  );
const apis = byCommand('src/main.ts');
const workers = byCommand('src/main.ts', '--worker-only');
const serviceProcesses = [...apis, ...workers];
const billrailServices = Object.keys(services).filter((name) => services[name]!.build !== undefined);

/** The settings a billrail process of this file starts with: the env file, then its environment. */
function settingsOf(name: string): Record<string, string> {
  return { ...filledIn, ...environmentOf(name) };
}

function seconds(duration: string | undefined): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration ?? '');
  assert.ok(match && duration !== '', `a duration such as 90s: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

describe('compose.production.yaml: the processes', () => {
  it('runs two API processes and two workers with node itself, and no sandbox', () => {
    assert.equal(apis.length, 2, `API processes: ${apis.join(', ')}`);
    assert.equal(workers.length, 2, `workers: ${workers.join(', ')}`);
    assert.deepEqual(
      billrailServices.sort(),
      [...serviceProcesses, 'migrate'].sort(),
      'every process built from the image is a service process or the migrate job: no sandbox',
    );
    for (const name of Object.keys(services)) {
      const settings = Object.keys(services[name]!.environment ?? {});
      assert.ok(!settings.some((key) => key.startsWith('SANDBOX')), `${name}: no SANDBOX setting`);
      assert.ok(
        !services[name]!.command?.some((word) => word.includes('sandbox')),
        `${name}: not the sandbox`,
      );
    }
    for (const name of billrailServices) {
      const service = services[name]!;
      const command = service.command;
      assert.ok(Array.isArray(command) && command[0] === 'node', `${name}: node is PID 1, never npm`);
      assert.ok(existsSync(path.join(ROOT, command[1]!)), `${name}: ${command[1]} exists`);
      assert.match(
        interpolated(service.image ?? ''),
        /^billrail:2026\.11\.28$/,
        `${name}: the release's tag`,
      );
      assert.deepEqual(service.env_file, ['deploy/compose.production.env'], `${name}: its secrets`);
      if (service.restart === 'no') continue;
      assert.ok(
        seconds(service.stop_grace_period) * 1000 > gracefulStopMs(),
        `${name}: stop_grace_period ${service.stop_grace_period} exceeds the graceful stop (${gracefulStopMs()} ms)`,
      );
    }
    for (const name of apis) assert.equal(environmentOf(name).WORKER, '0', `${name}: HTTP only`);
  });

  it('migrates once, straight to PostgreSQL, before any service process starts; none migrates itself', () => {
    const migrate = services.migrate!;
    assert.deepEqual(migrate.command, ['node', ...npmScript('migrate').split(' ').slice(1)]);
    assert.equal(migrate.restart, 'no', 'a one-shot: restarted, it would never complete');
    assert.equal(migrate.depends_on?.postgres?.condition, 'service_healthy');
    const config = loadConfig(settingsOf('migrate'));
    const direct = new URL(config.database.migrationUrl!);
    assert.equal(`${direct.hostname}:${direct.port}`, 'postgres:5432', 'not through PgBouncer');
    for (const name of serviceProcesses) {
      const dependsOn = services[name]!.depends_on ?? {};
      assert.equal(dependsOn.migrate?.condition, 'service_completed_successfully', name);
      assert.equal(dependsOn.pgbouncer?.condition, 'service_healthy', name);
      assert.equal(dependsOn.redis?.condition, 'service_healthy', name);
      assert.equal(
        loadConfig(settingsOf(name)).database.migrateOnStart,
        false,
        `${name}: MIGRATE_ON_START=0`,
      );
      assert.equal(environmentOf(name).MIGRATION_DATABASE_URL, undefined, `${name}: no direct URL`);
    }
    assert.equal(services.pgbouncer?.depends_on?.postgres?.condition, 'service_healthy');
  });
});

describe('compose.production.yaml: the settings', () => {
  const names = configEnvNames();

  it("names only settings src/config.ts's schema knows, in the compose file and in the env example", () => {
    for (const name of billrailServices)
      for (const key of Object.keys(environmentOf(name)))
        assert.ok(names.has(key), `${name}: ${key} is not a setting of src/config.ts`);
    for (const key of Object.keys(example))
      assert.ok(names.has(key), `${ENV_EXAMPLE}: ${key} is not a setting of src/config.ts`);
  });

  it('takes the secrets from the env file and .env alone: no default, no value in the compose file', () => {
    const uncommented = source.replace(/^\s*#.*$/gm, '');
    const expansions = [...uncommented.matchAll(/\$\{[^}]*\}/g)].map((m) => m[0]);
    assert.ok(expansions.length >= 5, 'the expansions are read');
    // interpolated() refuses a default (${NAME:-value}) and a name .env does not hold.
    for (const expansion of expansions) interpolated(expansion);
    for (const name of Object.keys(dotEnv))
      assert.match(source.split('\nx-billrail')[0]!, new RegExp(`\\b${name}\\b`), `the header names ${name}`);
    // A secret the compose file sets (one that several containers share, as METRICS_TOKEN with
    // Prometheus) is .env's, by name; every other is the env file's.
    for (const name of billrailServices)
      for (const key of productionSecretNames) {
        const value = services[name]!.environment?.[key];
        if (value !== undefined)
          assert.match(value, new RegExp(`^\\$\\{${key}:\\?[^}]+\\}$`), `${name}: ${key} from .env`);
      }
  });

  it("sets nothing the env file sets: a name in both would silently be the compose file's", () => {
    for (const name of billrailServices)
      for (const key of Object.keys(services[name]!.environment ?? {}))
        assert.ok(!(key in example), `${name}: ${key} is set in ${FILE} and in ${ENV_EXAMPLE}`);
  });

  it('ships secrets in the env example that production refuses, being printed here', () => {
    const secrets = productionSecretNames.filter((key) => key in example);
    assert.ok(secrets.length >= 10, `the example gives the secrets (${secrets.join(', ')})`);
    for (const key of secrets)
      assert.ok(knownExampleSecrets.has(example[key]!), `${key}=${example[key]} is a refused example value`);
  });

  it('is a production configuration each process accepts once the env file is filled in', () => {
    for (const name of [...serviceProcesses, 'migrate']) {
      const config = loadConfig(settingsOf(name));
      assert.equal(config.env, 'production', name);
      assert.equal(config.sandbox, false, name);
      assert.equal(config.storage.kind, 's3', `${name}: documents on S3, the processes share no disk`);
      assert.equal(config.http.host, '0.0.0.0', `${name}: reachable by the proxy and Prometheus`);
      assert.equal(config.http.trustProxyHops, 1, `${name}: Caddy, one hop`);
      assert.equal(config.http.publicBaseUrl, `https://${dotEnv.BILLRAIL_DOMAIN}`, name);
      assert.equal(config.http.metricsToken, dotEnv.METRICS_TOKEN, `${name}: scrapes need the token`);
      assert.equal(config.database.preparedStatements, false, `${name}: unnamed statements behind PgBouncer`);
      const url = new URL(config.database.url!);
      assert.equal(
        `${url.hostname}:${url.port}`,
        `pgbouncer:${environmentOf('pgbouncer').LISTEN_PORT}`,
        name,
      );
      assert.equal(new URL(config.redisUrl!).hostname, 'redis', name);
    }
    for (const name of serviceProcesses) {
      const first = settingsOf(serviceProcesses[0]!);
      const settings = settingsOf(name);
      for (const key of ['DATABASE_URL', 'REDIS_URL', 'METRICS_TOKEN', 'PUBLIC_BASE_URL'])
        assert.equal(settings[key], first[key], `${name}: ${key} as ${serviceProcesses[0]}'s`);
    }
  });
});

describe('compose.production.yaml: PgBouncer and PostgreSQL', () => {
  const pgbouncer = environmentOf('pgbouncer');
  const postgres = environmentOf('postgres');

  it('pools by transaction in front of the one database, with the same credentials', () => {
    assert.match(services.pgbouncer!.image ?? '', /^edoburu\/pgbouncer:v\d/, 'a pinned edoburu/pgbouncer');
    assert.equal(pgbouncer.POOL_MODE, 'transaction');
    assert.equal(pgbouncer.DB_HOST, 'postgres');
    assert.equal(pgbouncer.DB_USER, postgres.POSTGRES_USER);
    assert.equal(pgbouncer.DB_PASSWORD, postgres.POSTGRES_PASSWORD);
    assert.equal(pgbouncer.DB_NAME, postgres.POSTGRES_DB);
    // PostgreSQL 17 stores passwords as SCRAM: PgBouncer must speak it to the server.
    assert.equal(pgbouncer.AUTH_TYPE, 'scram-sha-256');
    const url = new URL(environmentOf(apis[0]!).DATABASE_URL!);
    assert.equal(url.username, pgbouncer.DB_USER);
    assert.equal(decodeURIComponent(url.password), pgbouncer.DB_PASSWORD);
    assert.equal(url.pathname, `/${pgbouncer.DB_NAME}`);
    assert.ok(services.pgbouncer!.healthcheck?.test?.includes(pgbouncer.LISTEN_PORT!), 'checked on its port');
  });

  it('takes every client connection the processes open, and PostgreSQL every server connection', () => {
    const clients = serviceProcesses.reduce(
      (sum, name) =>
        sum + connectionsPerProcess(Number(environmentOf(name).DATABASE_POOL_MAX), environmentOf(name)),
      0,
    );
    assert.ok(
      clients <= Number(pgbouncer.MAX_CLIENT_CONN),
      `${clients} client connections, MAX_CLIENT_CONN=${pgbouncer.MAX_CLIENT_CONN}`,
    );
    const maxConnections = Number(
      /max_connections=(\d+)/.exec(services.postgres!.command?.join(' ') ?? '')?.[1] ?? 100,
    );
    const server = Number(pgbouncer.DEFAULT_POOL_SIZE) + migrateConnections();
    // PostgreSQL keeps superuser_reserved_connections (3 by default) out of reach of the others.
    assert.ok(
      server <= maxConnections - 3,
      `${server} server connections, max_connections=${maxConnections}`,
    );
  });
});

/** The Caddyfile's `handle [matcher] { ... }` blocks. */
function caddyHandles(caddyfile: string): Array<{ matcher: string; body: string }> {
  return [...caddyfile.matchAll(/^\thandle ?(\S*) \{\n([\s\S]*?)^\t\}/gm)].map((m) => ({
    matcher: m[1]!,
    body: m[2]!,
  }));
}

describe('the proxy (deploy/Caddyfile.production)', () => {
  const caddyfile = readRepoFile('deploy/Caddyfile.production');
  const proxy = services.proxy!;

  it('serves BILLRAIL_DOMAIN over HTTPS, the only published ports', () => {
    assert.match(proxy.image ?? '', /^caddy:/);
    assert.ok(proxy.volumes?.includes('./deploy/Caddyfile.production:/etc/caddy/Caddyfile:ro'));
    assert.deepEqual(proxy.ports?.sort(), ['443:443', '80:80']);
    for (const name of Object.keys(services))
      if (name !== 'proxy') assert.equal(services[name]!.ports, undefined, `${name} is not published`);
    assert.match(caddyfile, /^\{\$BILLRAIL_DOMAIN\} \{$/m, 'one site: the domain, with automatic HTTPS');
    assert.doesNotMatch(caddyfile, /auto_https off/);
    assert.equal(environmentOf('proxy').BILLRAIL_DOMAIN, dotEnv.BILLRAIL_DOMAIN);
    for (const name of apis) assert.equal(proxy.depends_on?.[name]?.condition, 'service_healthy', name);
  });

  it('answers 404 for /metrics and /__sandbox, and sends the rest to the API processes that are ready', () => {
    const internal = /^\t@internal path (.+)$/m.exec(caddyfile)?.[1]?.split(/\s+/) ?? [];
    for (const route of ['/metrics', '/metrics/*', '/__sandbox', '/__sandbox/*'])
      assert.ok(internal.includes(route), `@internal matches ${route}`);
    const handles = caddyHandles(caddyfile);
    assert.equal(handles.length, 2, 'two handles');
    assert.equal(handles[0]!.matcher, '@internal', 'the internal paths first');
    assert.equal(handles[0]!.body.trim(), 'respond 404');
    const rest = handles[1]!;
    assert.equal(rest.matcher, '');
    const upstreams = /reverse_proxy ([^{\n]+)/.exec(rest.body)?.[1]?.trim().split(/\s+/) ?? [];
    assert.deepEqual(
      upstreams.sort(),
      apis.map((name) => `${name}:${environmentOf(name).PORT}`).sort(),
      'every API process on its port; never a metrics port, never a worker',
    );
    for (const option of ['lb_policy round_robin', 'health_uri /readyz'])
      assert.match(rest.body, new RegExp(`^\\t\\t\\t${option}$`, 'm'));
  });

  const caddy = spawnSync('caddy', ['version']).status === 0;
  it('answers so when Caddy runs it: /metrics and /__sandbox 404, the rest to the API', {
    skip: !caddy && 'no caddy',
  }, async (t) => {
    // The file itself, on a local plain-HTTP address for BILLRAIL_DOMAIN (no certificate to get),
    // its upstreams pointed at a local server that says what it was asked.
    const server = http.createServer((request, response) => response.end(`api ${request.url}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const api = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    const port = await freePort();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-caddy-production-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const local = path.join(dir, 'Caddyfile');
    const upstreams = /reverse_proxy api-1:\d+ api-2:\d+ \{[\s\S]*?\n\t\t\}/;
    assert.match(caddyfile, upstreams);
    await writeFile(local, caddyfile.replace(upstreams, `reverse_proxy ${api}`));
    const caddy = await runCaddy(local, dir, { BILLRAIL_DOMAIN: `http://127.0.0.1:${port}` });
    t.after(() => caddy.stop());
    const get = async (pathname: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${pathname}`);
      return `${response.status} ${await response.text()}`;
    };
    assert.equal(await get('/metrics'), '404 ');
    assert.equal(await get('/metrics/x'), '404 ');
    assert.equal(await get('/__sandbox/sms'), '404 ');
    assert.equal(await get('/__sandbox'), '404 ');
    assert.equal(await get('/_serverFn/getMe'), '200 api /_serverFn/getMe');
    assert.equal(await get('/metricsx'), '200 api /metricsx', 'only those paths');
  });
});

type ScrapeConfig = {
  job_name: string;
  metrics_path?: string;
  authorization?: { type?: string; credentials_file?: string };
  static_configs: Array<{ targets: string[] }>;
};
const prometheusConfig = parse(readRepoFile('ops/prometheus/prometheus.yml')) as {
  scrape_configs: ScrapeConfig[];
};

function targetsOf(job: string): string[] {
  const scrape = prometheusConfig.scrape_configs.find((config) => config.job_name === job);
  assert.ok(scrape, `prometheus.yml scrapes the job ${job}`);
  return scrape.static_configs.flatMap((config) => config.targets).sort();
}

describe('ops/prometheus/prometheus.yml: exactly what runs', () => {
  const metricsTargets = (file: Record<string, ComposeService>, names: string[]) =>
    names.map((name) => `${name}:${file[name]!.environment?.METRICS_PORT}`).sort();

  it('scrapes every API and worker of compose.production.yaml on its METRICS_PORT, and nothing else', () => {
    assert.deepEqual(targetsOf('billrail-api'), metricsTargets(services, apis));
    assert.deepEqual(targetsOf('billrail-worker'), metricsTargets(services, workers));
    assert.deepEqual(prometheusConfig.scrape_configs.map((config) => config.job_name).sort(), [
      'billrail-api',
      'billrail-worker',
    ]);
    const ports = workers.map((name) => environmentOf(name).METRICS_PORT);
    assert.equal(new Set(ports).size, workers.length, 'each worker on a port of its own');
    for (const name of serviceProcesses)
      assert.equal(loadConfig(settingsOf(name)).http.metricsPort, Number(environmentOf(name).METRICS_PORT));
  });

  it('scrapes compose.yaml (the sandbox) at the same targets', () => {
    const sandbox = (parse(readRepoFile('compose.yaml'), { merge: true }) as Compose).services;
    const named = (...command: string[]) =>
      Object.keys(sandbox).filter(
        (name) => JSON.stringify(sandbox[name]!.command) === JSON.stringify(['node', ...command]),
      );
    assert.deepEqual(targetsOf('billrail-api'), metricsTargets(sandbox, named('src/main.ts')));
    assert.deepEqual(
      targetsOf('billrail-worker'),
      metricsTargets(sandbox, named('src/main.ts', '--worker-only')),
    );
  });

  it('sends METRICS_TOKEN, from the secret compose mounts for the Prometheus it runs', () => {
    const prometheus = services.prometheus!;
    assert.ok(prometheus.volumes?.includes('./ops/prometheus:/etc/prometheus:ro'), 'this configuration');
    const [secret] = prometheus.secrets ?? [];
    assert.ok(secret !== undefined, 'Prometheus is given a secret');
    assert.equal(compose.secrets?.[secret]?.environment, 'METRICS_TOKEN', 'the token the processes check');
    assert.match(
      services[apis[0]!]!.environment?.METRICS_TOKEN ?? '',
      /^\$\{METRICS_TOKEN:\?/,
      'from .env too',
    );
    for (const scrape of prometheusConfig.scrape_configs) {
      assert.equal(scrape.metrics_path ?? '/metrics', '/metrics');
      assert.equal(scrape.authorization?.type ?? 'Bearer', 'Bearer', scrape.job_name);
      assert.equal(scrape.authorization?.credentials_file, `/run/secrets/${secret}`, scrape.job_name);
    }
  });

  it('scrapes the systemd units on their ports: the API 9100, each worker its instance', () => {
    // billrail.service sets METRICS_PORT itself; a worker's is its instance name (billrail-worker@9101).
    const api = readRepoFile('deploy/billrail.service');
    const worker = readRepoFile('deploy/billrail-worker@.service');
    const apiPort = /^Environment=.*\bMETRICS_PORT=(\d+)/m.exec(api)?.[1];
    assert.ok(apiPort !== undefined, 'billrail.service sets METRICS_PORT');
    for (const target of targetsOf('billrail-api')) assert.equal(target.split(':')[1], apiPort, target);
    assert.match(worker, /^Environment=.*\bMETRICS_PORT=%i\b/m, 'a worker listens on its instance name');
    for (const target of targetsOf('billrail-worker'))
      assert.match(
        worker,
        new RegExp(`billrail-worker@${target.split(':')[1]}\\b`),
        `the unit names ${target}`,
      );
  });

  it('expects, in BillrailWorkersBelowExpected, as many workers as it scrapes', () => {
    const rules = readRepoFile('ops/prometheus/alerts.yml');
    const expected = /count\(up\{job="billrail-worker"\} == 1\) < (\d+)/.exec(rules)?.[1];
    assert.equal(Number(expected), targetsOf('billrail-worker').length);
    assert.equal(Number(expected), workers.length);
  });
});
