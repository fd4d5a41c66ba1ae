import assert from 'node:assert/strict';
import net from 'node:net';

/** A TCP port free on 127.0.0.1 right now, for a child process of the test to listen on. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}
