import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../test/helpers/free-port.ts';

// The peak profile's own PostgreSQL cluster (issue 43 item 6): initdb into a temporary folder, on a
// free port, durable as production runs it (fsync and synchronous_commit on) with room for every
// process's pool (max_connections 300). Its own, so that the soak can restart the database for real
// (`pg_ctl restart -m fast`) without cutting off anyone else on the machine. PostgreSQL refuses to
// run as root: as root, its commands run as the postgres user, who then owns the folder.

const run = promisify(execFile);

export type Cluster = {
  /** postgres://postgres@127.0.0.1:<port>/<database>. */
  url(database: string): string;
  version: string;
  settings: string;
  /** `pg_ctl restart -m fast`, waited for; how long it took, in ms. */
  restart(): Promise<number>;
  /** Stops it and removes its folder, unless `keep` (SOAK_KEEP=1): then it is left running. */
  close(keep: boolean): Promise<void>;
  dir: string;
};

/** The newest PostgreSQL's bin folder installed the Debian way, or null. */
function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? null : path.join(root, newest, 'bin');
}

const SETTINGS: Record<string, string> = {
  fsync: 'on',
  synchronous_commit: 'on',
  max_connections: '300',
  listen_addresses: "'127.0.0.1'",
};

export async function startCluster(): Promise<Cluster> {
  const bin = binDir();
  if (bin === null) throw new Error('no /usr/lib/postgresql/<version>/bin/initdb on this machine');
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-peak-pg-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    fs.chownSync(dir, uid, gid);
  }
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args])
      : run(path.join(bin, tool), args);
  const port = await freePort();
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const lines = Object.entries({ ...SETTINGS, port: String(port), unix_socket_directories: `'${dir}'` }).map(
    ([name, value]) => `${name} = ${value}`,
  );
  // Appended as the postgres user would: the file stays theirs.
  fs.appendFileSync(path.join(data, 'postgresql.conf'), `\n# billrail peak soak\n${lines.join('\n')}\n`);
  const log = path.join(dir, 'postgres.log');
  await pg('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', 'start']);
  const version = path.basename(path.dirname(bin));
  return {
    dir,
    version,
    settings: Object.entries(SETTINGS)
      .filter(([name]) => name !== 'listen_addresses')
      .map(([name, value]) => `${name}=${value}`)
      .join(', '),
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async restart() {
      const started = performance.now();
      await pg('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '120', '-m', 'fast', 'restart']);
      return Math.round(performance.now() - started);
    },
    async close(keep) {
      if (keep) return;
      await pg('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
