import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { builtinModules } from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  type ComposeService,
  configDefault,
  configEnvNames,
  connectionsPerProcess,
  gracefulStopMs,
  heapFlagsOf,
  migrateConnections,
  nodeOptionsOf,
  npmScript,
  ROOT,
  readRepoFile,
  runCaddy,
  sandboxSecrets,
} from './support.ts';

// compose.yaml, deploy/Caddyfile, the Dockerfile and .dockerignore, checked as files: CI has no
// Docker engine to build the image or start the services. What is checked is what would break the
// deployment without a word: a service run through npm (SIGTERM lost), a misspelt setting (dropped
// by the config parser, so its default runs), processes that disagree on a secret, a proxy route to
// nowhere, more connections than PostgreSQL accepts, dev dependencies or root in the image.

const compose = parse(readRepoFile('compose.yaml'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;
const caddyfile = readRepoFile('deploy/Caddyfile');

/** A value as `docker compose up` sees it with nothing set: every `${NAME:-default}` at its default. */
function interpolated(value: string): string {
  return value.replace(/\$\{([A-Z_][A-Z0-9_]*)(?::-([^}]*))?\}/g, (whole, _name, fallback?: string) => {
    assert.ok(fallback !== undefined, `${whole} has a default, so that docker compose up runs as is`);
    return fallback;
  });
}

function environmentOf(name: string): Record<string, string> {
  const environment = services[name]?.environment ?? {};
  for (const [key, value] of Object.entries(environment))
    assert.equal(typeof value, 'string', `${name}: ${key} is quoted (a string, as the process reads it)`);
  return Object.fromEntries(Object.entries(environment).map(([key, value]) => [key, interpolated(value)]));
}

const byCommand = (...command: string[]) =>
  Object.keys(services).filter(
    (name) => JSON.stringify(services[name]!.command) === JSON.stringify(['node', ...command]),
  );
const apis = byCommand('src/main.ts');
const workers = byCommand('src/main.ts', '--worker-only');
const serviceProcesses = [...apis, ...workers];
/**
 * The standalone sandbox (npm run sandbox) and the service's SANDBOX_URL and SANDBOX_CLOCK_TOKEN are
 * being built on another branch: until src/sandbox/main.ts is in the tree, its command and those two
 * names are taken on the contract's word; once it is, they are checked like the rest.
 */
const standaloneSandboxLanded = existsSync(path.join(ROOT, 'src/sandbox/main.ts'));
const namesOfTheStandaloneSandbox = standaloneSandboxLanded ? [] : ['SANDBOX_URL', 'SANDBOX_CLOCK_TOKEN'];
const billrailServices = Object.keys(services).filter((name) => services[name]!.image === 'billrail:local');

function seconds(duration: string | undefined): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration ?? '');
  assert.ok(match && duration !== '', `a duration such as 90s: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

describe('compose.yaml: the processes', () => {
  it('runs two API processes and two workers, each with node itself and never npm', () => {
    assert.equal(apis.length, 2, `API processes: ${apis.join(', ')}`);
    assert.equal(workers.length, 2, `workers: ${workers.join(', ')}`);
    for (const name of billrailServices) {
      const command = services[name]!.command;
      assert.ok(Array.isArray(command), `${name}: the command is a list (exec form, no shell)`);
      assert.equal(command[0], 'node', `${name}: node is PID 1 and gets SIGTERM (npm would not pass it on)`);
      if (name !== 'sandbox' || standaloneSandboxLanded)
        assert.ok(existsSync(path.join(ROOT, command[1]!)), `${name}: ${command[1]} exists`);
    }
    for (const name of apis) assert.equal(environmentOf(name).WORKER, '0', `${name}: HTTP only`);
  });

  it('builds one image for every billrail process and gives each time to stop gracefully', () => {
    assert.ok(billrailServices.length >= 6, 'sandbox, migrate, two APIs, two workers');
    for (const name of billrailServices) {
      const service = services[name]!;
      assert.ok(service.build !== undefined, `${name}: built from the Dockerfile`);
      if (service.restart === 'no') continue;
      assert.ok(
        seconds(service.stop_grace_period) * 1000 > gracefulStopMs(),
        `${name}: stop_grace_period ${service.stop_grace_period} exceeds the graceful stop (${gracefulStopMs()} ms)`,
      );
    }
  });

  it('migrates once before any service process starts, after PostgreSQL is ready', () => {
    const migrate = services.migrate!;
    assert.deepEqual(migrate.command, ['node', ...npmScript('migrate').split(' ').slice(1)]);
    assert.equal(migrate.restart, 'no', 'a one-shot: restarted, it would never complete');
    assert.equal(migrate.depends_on?.postgres?.condition, 'service_healthy');
    for (const name of serviceProcesses) {
      const dependsOn = services[name]!.depends_on ?? {};
      assert.equal(dependsOn.migrate?.condition, 'service_completed_successfully', name);
      assert.equal(dependsOn.postgres?.condition, 'service_healthy', name);
      assert.equal(dependsOn.redis?.condition, 'service_healthy', name);
      assert.ok(dependsOn.sandbox !== undefined, `${name} starts after the sandbox it uses`);
    }
    assert.ok(services.postgres?.healthcheck?.test?.includes('pg_isready'));
    assert.ok(services.redis?.healthcheck?.test?.includes('ping'));
  });
});

describe('compose.yaml: the settings', () => {
  const names = configEnvNames();

  it("names only settings src/config.ts's schema knows, and each service process's are valid", () => {
    for (const name of [...serviceProcesses, 'migrate']) {
      const environment = environmentOf(name);
      for (const key of Object.keys(environment))
        assert.ok(
          names.has(key) || namesOfTheStandaloneSandbox.includes(key),
          `${name}: ${key} is not a setting of src/config.ts`,
        );
      const config = loadConfig(environment);
      assert.equal(config.database.url?.startsWith('postgres://'), true, `${name}: on PostgreSQL`);
      assert.ok(config.redisUrl !== undefined, `${name}: rate limits shared through Redis`);
      assert.equal(config.http.host, '0.0.0.0', `${name}: reachable by the proxy`);
    }
  });

  it('uses the standalone sandbox, with the names of the sandbox contract', () => {
    // The names the standalone sandbox (npm run sandbox) reads: the contract between engineers.
    const sandboxNames = [
      'PORT',
      'HOST',
      'SERVICE_URL',
      'PAYMENT_SIGNING_SECRET',
      'SANDBOX_CLOCK_TOKEN',
      'VAPID_PUBLIC_KEY',
      'USSD_CALLBACK_TOKEN',
    ];
    const sandbox = environmentOf('sandbox');
    assert.deepEqual(services.sandbox!.command, ['node', ...npmScriptOr('sandbox', 'src/sandbox/main.ts')]);
    for (const key of Object.keys(sandbox)) assert.ok(sandboxNames.includes(key), `sandbox: ${key}`);
    const serviceUrl = new URL(sandbox.SERVICE_URL!);
    assert.equal(serviceUrl.hostname, 'proxy', 'webhooks and callbacks reach the service through the proxy');
    assert.equal(serviceUrl.port, proxyPort());
    for (const name of serviceProcesses) {
      const environment = environmentOf(name);
      const sandboxUrl = new URL(environment.SANDBOX_URL!);
      assert.equal(sandboxUrl.hostname, 'sandbox', `${name}: SANDBOX_URL names the sandbox service`);
      assert.equal(sandboxUrl.port, sandbox.PORT, `${name}: on the sandbox's port`);
      assert.ok(environment.SANDBOX_CLOCK_TOKEN!.length >= 16, `${name}: a clock token of 16+ characters`);
    }
  });

  it('gives every process the same secrets and keys, and the sandbox defaults only in the sandbox', () => {
    // The USSD callback token too: the sandbox's feature phone calls whichever API process the proxy picks.
    const shared = [
      'PAYMENT_SIGNING_SECRET',
      'SANDBOX_CLOCK_TOKEN',
      'VAPID_PUBLIC_KEY',
      'USSD_CALLBACK_TOKEN',
    ];
    const sandbox = environmentOf('sandbox');
    const first = environmentOf(serviceProcesses[0]!);
    for (const name of serviceProcesses) {
      const environment = environmentOf(name);
      for (const key of [...shared, 'SECRET_PEPPER', 'VAPID_PRIVATE_KEY', 'DATABASE_URL', 'REDIS_URL'])
        assert.equal(environment[key], first[key], `${name}: ${key} as ${serviceProcesses[0]}'s`);
      for (const key of shared)
        assert.equal(environment[key], sandbox[key], `${name}: ${key} as the sandbox's`);
      const config = loadConfig(environment);
      const secrets = sandboxSecrets();
      const usesSandboxSecret =
        config.secrets.paymentSigning === secrets.signing || config.secrets.pepper === secrets.pepper;
      assert.ok(config.sandbox || !usesSandboxSecret, `${name}: a sandbox secret outside the sandbox`);
      assert.notEqual(config.env, 'production', `${name}: the demo is the sandbox, refused in production`);
    }
  });

  it('lets PostgreSQL accept every connection the processes may open', () => {
    const postgres = services.postgres!;
    const maxConnections = Number(
      /max_connections=(\d+)/.exec(postgres.command?.join(' ') ?? '')?.[1] ?? 100,
    );
    const opened = serviceProcesses.reduce((sum, name) => {
      const poolMax = Number(environmentOf(name).DATABASE_POOL_MAX ?? configDefault('DATABASE_POOL_MAX'));
      return sum + connectionsPerProcess(poolMax, environmentOf(name));
    }, migrateConnections());
    // PostgreSQL keeps superuser_reserved_connections (3 by default) out of reach of the others.
    assert.ok(
      opened <= maxConnections - 3,
      `${opened} connections at most, max_connections=${maxConnections}`,
    );
    const url = new URL(environmentOf(serviceProcesses[0]!).DATABASE_URL!);
    const postgresEnv = environmentOf('postgres');
    assert.equal(url.hostname, 'postgres');
    assert.equal(url.username, postgresEnv.POSTGRES_USER);
    assert.equal(url.password, postgresEnv.POSTGRES_PASSWORD);
    assert.equal(url.pathname, `/${postgresEnv.POSTGRES_DB}`);
    assert.equal(new URL(environmentOf(serviceProcesses[0]!).REDIS_URL!).hostname, 'redis');
  });
});

/** The port of the Caddyfile's one site (`:8080 {`). */
function proxyPort(): string {
  const match = /^:(\d+) \{$/m.exec(caddyfile);
  assert.ok(match, 'the Caddyfile serves one site on a port');
  return match[1]!;
}

function npmScriptOr(name: string, fallback: string): string[] {
  // `npm run sandbox` may not be in package.json before the standalone sandbox lands.
  try {
    return npmScript(name).split(' ').slice(1);
  } catch {
    return [fallback];
  }
}

/** The `handle [matcher] { ... }` blocks of the Caddyfile in order, with their reverse_proxy or respond lines. */
function caddyRoutes(
  text = caddyfile,
): Array<{ matcher: string; upstreams: string[]; options: string[]; respond: string | undefined }> {
  return [...text.matchAll(/^\thandle ?(\S*) \{\n([\s\S]*?)^\t\}/gm)].map((m) => {
    const body = m[2]!;
    const upstreams = /reverse_proxy ([^{\n]+)/.exec(body)?.[1]?.trim().split(/\s+/) ?? [];
    const options = /reverse_proxy [^{\n]+\{\n([\s\S]*?)\n\t\t\}/.exec(body)?.[1]?.split('\n') ?? [];
    const respond = /^\t\trespond (.+)$/m.exec(body)?.[1];
    return { matcher: m[1]!, upstreams, options: options.map((line) => line.trim()), respond };
  });
}

/** The Caddyfile's named matchers (`@name path ...` or `@name { ... }`): each one's lines. */
function caddyMatchers(): Record<string, string[]> {
  const matchers: Record<string, string[]> = {};
  for (const m of caddyfile.matchAll(/^\t(@\w+) (?:\{\n([\s\S]*?)^\t\}|(.+))$/gm)) {
    const lines = m[2] !== undefined ? m[2].split('\n').map((line) => line.trim()) : [m[3]!.trim()];
    matchers[m[1]!] = lines.filter((line) => line !== '');
  }
  return matchers;
}

describe('the proxy (deploy/Caddyfile)', () => {
  it('is published on the port of PUBLIC_BASE_URL and mounts the Caddyfile', () => {
    const proxy = services.proxy!;
    assert.match(proxy.image ?? '', /^caddy:/);
    const publicPort = new URL(environmentOf(apis[0]!).PUBLIC_BASE_URL!).port;
    assert.ok(proxy.ports?.includes(`${publicPort}:${proxyPort()}`), `ports: ${proxy.ports}`);
    assert.ok(proxy.volumes?.includes('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro'));
    for (const name of apis) assert.equal(proxy.depends_on?.[name]?.condition, 'service_healthy', name);
  });

  it('blocks /metrics and /__sandbox by default, forwarding /__sandbox/* on the opt-in compose gives it', () => {
    const routes = caddyRoutes();
    assert.deepEqual(
      routes.map((route) => route.matcher),
      ['@sandbox', '@internal', ''],
      'the opt-in first, then the block, then the rest (Caddy keeps named matchers in order)',
    );
    const matchers = caddyMatchers();
    assert.deepEqual(matchers['@sandbox']?.sort(), [
      'expression {env.BILLRAIL_SANDBOX_ROUTE} == "1"',
      'path /__sandbox/*',
    ]);
    assert.deepEqual(routes[0]!.upstreams, [`sandbox:${environmentOf('sandbox').PORT}`]);
    assert.deepEqual(matchers['@internal'], ['path /metrics /metrics/* /__sandbox /__sandbox/*']);
    assert.equal(routes[1]!.respond, '404');
    assert.deepEqual(routes[1]!.upstreams, []);
    // compose.yaml is the sandbox's demo: its proxy opts in.
    assert.equal(environmentOf('proxy').BILLRAIL_SANDBOX_ROUTE, '1');
  });

  it('sends the rest round-robin to the API processes that are ready', () => {
    const rest = caddyRoutes().find((route) => route.matcher === '');
    assert.deepEqual(
      rest?.upstreams.sort(),
      apis.map((name) => `${name}:${environmentOf(name).PORT}`).sort(),
      'every API process, on its own port; no worker, which serves no HTTP',
    );
    assert.ok(rest?.options.includes('lb_policy round_robin'));
    assert.ok(rest?.options.includes('health_uri /readyz'));
    assert.match(readRepoFile('src/app.ts'), /app\.get\('\/readyz'/, 'the service answers /readyz');
  });

  const caddy = spawnSync('caddy', ['version']).status === 0;
  it('answers so when Caddy runs it: /metrics and /__sandbox 404, the sandbox only on the opt-in', {
    skip: !caddy && 'no caddy',
  }, async (t) => {
    // The file itself, its upstreams pointed at two local servers that say who answered.
    const upstream = async (who: string) => {
      const server = http.createServer((request, response) => response.end(`${who} ${request.url}`));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
      return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const sandbox = await upstream('sandbox');
    const api = await upstream('api');
    const port = await freePort();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-caddy-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const local = path.join(dir, 'Caddyfile');
    await writeFile(
      local,
      caddyfile
        .replace(`:${proxyPort()} {`, `:${port} {`)
        .replace(/reverse_proxy sandbox:\d+/, `reverse_proxy ${sandbox}`)
        .replace(/reverse_proxy api-1:\d+ api-2:\d+ \{[\s\S]*?\n\t\t\}/, `reverse_proxy ${api}`),
    );
    const answers = async (env: Record<string, string>) => {
      const caddy = await runCaddy(local, dir, env);
      try {
        const get = async (pathname: string) => {
          const response = await fetch(`http://127.0.0.1:${port}${pathname}`);
          return `${response.status} ${await response.text()}`;
        };
        return {
          metrics: await get('/metrics'),
          sandbox: await get('/__sandbox/sms'),
          api: await get('/_serverFn/getMe'),
        };
      } finally {
        await caddy.stop();
      }
    };
    assert.deepEqual(await answers({}), {
      metrics: '404 ',
      sandbox: '404 ',
      api: '200 api /_serverFn/getMe',
    });
    assert.deepEqual(await answers({ BILLRAIL_SANDBOX_ROUTE: '1' }), {
      metrics: '404 ',
      sandbox: '200 sandbox /__sandbox/sms',
      api: '200 api /_serverFn/getMe',
    });
  });
});

/** The Dockerfile's stages: the instructions of each FROM, continuation lines joined. */
function dockerStages(): Array<{ from: string; name: string | undefined; lines: string[] }> {
  const lines = readRepoFile('Dockerfile')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const stages: Array<{ from: string; name: string | undefined; lines: string[] }> = [];
  for (const line of lines) {
    const from = /^FROM (\S+)(?: AS (\S+))?$/.exec(line);
    if (from) stages.push({ from: from[1]!, name: from[2], lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

describe('the Dockerfile', () => {
  const stages = dockerStages();
  const runtime = stages.at(-1)!;
  const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(readRepoFile('Dockerfile'))?.[1];

  it('builds from the official Node 24 image in stages, the web client in one of its own', () => {
    assert.match(arg ?? '', /^node:24[-.]/);
    assert.ok(stages.length >= 3, 'dependencies, web build, runtime');
    // The stages start from the image named once by ARG NODE_IMAGE, or from one another.
    for (const stage of stages)
      assert.ok(['$' + '{NODE_IMAGE}', ...stages.map((s) => s.name)].includes(stage.from), stage.from);
    const webStage = stages.find((stage) => stage.lines.includes(`RUN ${npmScript('build')}`));
    assert.ok(webStage?.name !== undefined, 'a stage runs npm run build');
    assert.ok(runtime.lines.includes(`COPY --from=${webStage.name} /app/web/dist web/dist`));
  });

  it('runs node src/main.ts as a user other than root, with production dependencies alone', () => {
    const user = runtime.lines.filter((line) => line.startsWith('USER ')).at(-1);
    assert.ok(user !== undefined && !/^USER (root|0)(:|$)/.test(user), `runtime user: ${user}`);
    assert.ok(runtime.lines.indexOf(user) < runtime.lines.findIndex((line) => line.startsWith('CMD ')));
    assert.deepEqual(JSON.parse(runtime.lines.find((line) => line.startsWith('CMD '))!.slice(4)), [
      'node',
      'src/main.ts',
    ]);
    assert.ok(!runtime.lines.some((line) => line.startsWith('ENTRYPOINT')), 'nothing wraps node');
    const installs = runtime.lines.filter((line) => /\bnpm (ci|install)\b/.test(line));
    assert.equal(installs.length, 1);
    assert.match(installs[0]!, /--omit=dev/);
    assert.match(installs[0]!, /--workspaces=false/, "not the web workspace's Vite and React");
    assert.ok(
      !runtime.lines.some((line) => /^COPY --from=\S+ .*node_modules/.test(line)),
      'no node_modules from a stage that installed dev dependencies',
    );
    assert.match(runtime.lines.find((line) => line.startsWith('WORKDIR')) ?? '', /^WORKDIR \/app$/);
  });

  it("sizes V8's heap as npm start does, for every process of the image (docs/memory.md)", () => {
    const env = runtime.lines.filter((line) => line.startsWith('ENV '));
    const flags = heapFlagsOf(npmScript('start'));
    assert.equal(flags.length, 2, 'npm start sets the young and the old generation');
    assert.deepEqual(nodeOptionsOf(env), flags);
  });

  it('needs no dev dependency at run time: src/ imports only dependencies and Node built-ins', async () => {
    const pkg = JSON.parse(readRepoFile('package.json')) as { dependencies: Record<string, string> };
    const files = (await readdir(path.join(ROOT, 'src'), { recursive: true })).filter((f) =>
      f.endsWith('.ts'),
    );
    assert.ok(files.length > 50, 'the sources are read');
    for (const file of files) {
      const source = readRepoFile(path.join('src', file));
      for (const match of source.matchAll(
        /(?:^|\n)\s*(?:import|export)\s[^'";]*?from '([^']+)'|import\('([^']+)'\)/g,
      )) {
        const specifier = (match[1] ?? match[2])!;
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier))
          continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0]!;
        assert.ok(name in pkg.dependencies, `src/${file} imports ${name}, which the image does not install`);
      }
    }
  });

  it('leaves local state, dependencies and secrets out of the build context', () => {
    const ignored = readRepoFile('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', 'data', 'web/dist', '.git', '.env', '*.env'])
      assert.ok(ignored.includes(entry), `.dockerignore: ${entry}`);
  });
});
