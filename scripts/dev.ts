import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

// `npm run dev`: the service (sandbox, embedded PGlite) and the web client with hot reload, in one
// command. Vite serves the client on http://localhost:5173 and passes the API on to the service on
// :3000. Ctrl-C stops both; either one stopping stops the other.

const root = path.resolve(import.meta.dirname, '..');
const children: ChildProcess[] = [
  spawn(process.execPath, ['src/main.ts'], { cwd: root, stdio: 'inherit' }),
  spawn(
    process.execPath,
    [path.join(root, 'node_modules/vite/bin/vite.js'), '--config', 'web/vite.config.ts'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  ),
];

let stopping = false;
function stop(code: number): void {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  process.exitCode = code;
}
for (const child of children) child.on('exit', (code) => stop(code ?? 1));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(0));
