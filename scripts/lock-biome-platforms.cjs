// Adds lock entries for @biomejs/biome's optional platform binaries that this registry does not serve,
// so that `npm ci` (npm 11) finds the lock in sync with package.json. They never install on linux-x64.
const fs = require('node:fs');
const file = process.argv[2];
const lock = JSON.parse(fs.readFileSync(file, 'utf8'));
const platforms = {
  'cli-android-arm64': { os: ['android'], cpu: ['arm64'] },
  'cli-android-x64': { os: ['android'], cpu: ['x64'] },
  'cli-darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'cli-darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'cli-linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'cli-linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'cli-win32-arm64': { os: ['win32'], cpu: ['arm64'] },
  'cli-win32-x64': { os: ['win32'], cpu: ['x64'] },
};
const version = lock.packages['node_modules/@biomejs/biome'].version;
for (const [name, p] of Object.entries(platforms)) {
  lock.packages[`node_modules/@biomejs/${name}`] ??= {
    version,
    cpu: p.cpu,
    dev: true,
    ...(p.libc ? { libc: p.libc } : {}),
    license: 'MIT OR Apache-2.0',
    optional: true,
    os: p.os,
    engines: { node: '>=14.21.3' },
  };
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
