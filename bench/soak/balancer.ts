import http from 'node:http';
import type { AddressInfo } from 'node:net';

// The load balancer in front of the API processes, as a deployment has one: the sandbox's webhooks,
// callbacks and clock-jobs calls (SERVICE_URL) and the checkout's return go through it, so that an
// API process killed by the soak costs them nothing but a retry on the other one. Round robin; a
// backend that refuses the connection is skipped for that request. Requests are buffered whole
// (they are small), so that one can be sent again to the next backend.

export type Balancer = { url: string; close(): Promise<void> };

const BACKEND_TIMEOUT_MS = 330_000;

function forward(
  backend: string,
  request: http.IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const target = new URL(request.url ?? '/', backend);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      target,
      {
        method: request.method,
        headers: { ...request.headers, host: target.host },
        timeout: BACKEND_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 502,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.on('timeout', () => outgoing.destroy(new Error('backend timeout')));
    outgoing.end(body);
  });
}

export async function startBalancer(backends: string[]): Promise<Balancer> {
  let next = 0;
  const server = http.createServer((request, reply) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks);
      const first = next++ % backends.length;
      for (let tried = 0; tried < backends.length; tried++) {
        const backend = backends[(first + tried) % backends.length] as string;
        try {
          const answer = await forward(backend, request, body);
          reply.writeHead(answer.status, answer.headers).end(answer.body);
          return;
        } catch {
          // Refused or reset before an answer (a killed process): the next backend. A request
          // that reached a process which died mid-way may have been carried out: what a real
          // balancer risks too, and why every POST carries an Idempotency-Key.
        }
      }
      reply.writeHead(502, { 'content-type': 'text/plain' }).end('no backend answered');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
