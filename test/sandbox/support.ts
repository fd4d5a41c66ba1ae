import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/free-port.ts';
import { ok, post, type Reachable, readSms, type SignedIn, uniquePhone } from '../helpers/world.ts';

// The sandbox as its own process and the services that use it (SANDBOX_URL), as child processes of
// the pinned node on real ports: what an operator runs with `npm run sandbox` and `npm start`.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SANDBOX_MAIN = path.join(ROOT, 'src/sandbox/main.ts');
export const SERVICE_MAIN = path.join(ROOT, 'src/main.ts');
/** A start-up (the first builds the web client) may take this long on a loaded machine, at most. */
const START_TIMEOUT_MS = 180_000;

export type Child = Reachable & {
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
};

/** Every child this test file started, killed by stopAll (and never left behind). */
export type Children = { all: Set<Child>; cleanups: Array<() => Promise<void>> };

export function children(): Children {
  return { all: new Set(), cleanups: [] };
}

export async function stopAll(owned: Children): Promise<void> {
  for (const child of owned.all) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await child.exited;
  }
  for (const cleanup of owned.cleanups.reverse()) await cleanup();
}

export function run(owned: Children, script: string, env: Record<string, string>, baseUrl = ''): Child {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    // A clean environment: nothing of the runner's (NODE_TEST_CONTEXT, DATABASE_URL) leaks in.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      output += chunk;
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const started: Child = { process: child, exited, output: () => output, baseUrl };
  owned.all.add(started);
  return started;
}

/** Waits until the child logs that it started (after its /healthz answers); fails if it exits first. */
export async function started(child: Child, message: string): Promise<void> {
  const seen = () => child.output().includes(`"msg":"${message}"`);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`not started in time: ${child.output()}`)),
      START_TIMEOUT_MS,
    );
    const check = () => {
      if (seen()) finish();
    };
    function finish(error?: Error) {
      clearTimeout(timer);
      child.process.stdout!.off('data', check);
      if (error === undefined) resolve();
      else reject(error);
    }
    child.process.stdout!.on('data', check);
    void child.exited.then((exit) => {
      if (!seen()) finish(new Error(`exited (${JSON.stringify(exit)}) first: ${child.output()}`));
    });
    check();
  });
  const health = await fetch(`${child.baseUrl}/healthz`);
  if (health.status !== 200) throw new Error(`/healthz answered ${health.status}`);
}

/** A VAPID key pair in web-push's encoding (URL-safe base64 of the raw point and scalar). */
export function vapidKeys(): { publicKey: string; privateKey: string } {
  const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const pub = pair.publicKey.export({ format: 'jwk' });
  const raw = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(pub.x!, 'base64url'),
    Buffer.from(pub.y!, 'base64url'),
  ]);
  return { publicKey: raw.toString('base64url'), privateKey: pair.privateKey.export({ format: 'jwk' }).d! };
}

export type Deployment = {
  owned: Children;
  sandbox: Child;
  services: Child[];
};

/**
 * The sandbox process and `count` service processes (the first is SERVICE_URL: webhooks and the
 * clock-jobs call go to it), all workers, sharing the clock token and the VAPID keys; on the
 * database `databaseUrl` (PostgreSQL) or, for one service, PGlite files in its DATA_DIR.
 */
export async function deploy(
  owned: Children,
  options: { count: number; databaseUrl: string | undefined; serviceEnv?: Record<string, string> },
): Promise<Deployment> {
  const token = randomBytes(24).toString('base64url');
  const keys = vapidKeys();
  const sandboxPort = await freePort();
  const servicePorts = await Promise.all(Array.from({ length: options.count }, () => freePort()));
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const sandbox = run(
    owned,
    SANDBOX_MAIN,
    {
      PORT: String(sandboxPort),
      SERVICE_URL: `http://127.0.0.1:${servicePorts[0]}`,
      SANDBOX_CLOCK_TOKEN: token,
      VAPID_PUBLIC_KEY: keys.publicKey,
      LOG_LEVEL: 'info',
    },
    sandboxUrl,
  );
  await started(sandbox, 'billrail sandbox started');
  const services: Child[] = [];
  // One after the other: the first start builds the web client, the others find it built.
  for (const port of servicePorts) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-standalone-'));
    owned.cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const service = run(
      owned,
      SERVICE_MAIN,
      {
        NODE_ENV: 'test',
        PORT: String(port),
        DATA_DIR: dataDir,
        ...(options.databaseUrl !== undefined ? { DATABASE_URL: options.databaseUrl } : {}),
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
        SANDBOX_URL: sandboxUrl,
        SANDBOX_CLOCK_TOKEN: token,
        VAPID_PUBLIC_KEY: keys.publicKey,
        VAPID_PRIVATE_KEY: keys.privateKey,
        WORKER: '1',
        RATE_LIMIT_PER_MINUTE: '100000',
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
        RATE_LIMIT_PHONE_PER_MINUTE: '100000',
        LOG_LEVEL: 'info',
        ...options.serviceEnv,
      },
      `http://127.0.0.1:${port}`,
    );
    await started(service, 'billrail started');
    services.push(service);
  }
  return { owned, sandbox, services };
}

/** Signs a phone in through `service`, reading the code where the sandbox process keeps it. */
export async function signInThrough(
  service: Reachable,
  sandbox: Reachable,
  phone = uniquePhone(),
): Promise<SignedIn> {
  ok(await post(service, 'requestOtp', { phone }));
  const { code } = await readSms(sandbox, phone);
  const session = ok(
    await post<{ accessToken: string; refreshToken: string; user: { id: string } }>(service, 'verifyOtp', {
      phone,
      code,
    }),
  );
  return {
    phone,
    userId: session.user.id,
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
  };
}

/** Moves the sandbox clock (which runs what became due through SERVICE_URL before it answers). */
/** The sandbox clock's time now. */
export async function sandboxClock(sandbox: Reachable): Promise<Date> {
  const response = await fetch(`${sandbox.baseUrl}/__sandbox/clock`);
  const body = (await response.json()) as { data: { now: string } };
  return new Date(body.data.now);
}

export async function moveClock(sandbox: Reachable, advanceSeconds: number): Promise<Date> {
  const response = await fetch(`${sandbox.baseUrl}/__sandbox/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceSeconds }),
  });
  const body = (await response.json()) as { data: { now: string } };
  if (response.status !== 200)
    throw new Error(`the clock move answered ${response.status}: ${JSON.stringify(body)}`);
  return new Date(body.data.now);
}

/** POSTs JSON to a sandbox control; the status and the body. */
export async function control(
  sandbox: Reachable,
  path: string,
  body: unknown,
): Promise<{ status: number; body: { success: boolean; data?: unknown; error?: { code: string } } }> {
  const response = await fetch(`${sandbox.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as never };
}
