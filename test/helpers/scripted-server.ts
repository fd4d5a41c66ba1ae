import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local HTTP server whose answers a test scripts, for the ways an outside party can misbehave
// (timeouts, 5xx, malformed or wrongly shaped bodies) that its sandbox simulator never does. It
// records every request so a test can assert what the adapter sent and how often.

export type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;
export type Received = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

export type ScriptedServer = {
  baseUrl: string;
  /** Ends every open connection (requests a test's handler left hanging on purpose). */
  closeAllConnections(): void;
  close(): Promise<void>;
};

/** Starts on 127.0.0.1 at a free port; every request is recorded in `received`, then handed to `onRequest`. */
export async function startScriptedServer(onRequest: Handler, received: Received[]): Promise<ScriptedServer> {
  const server = createServer((request, response) => {
    // One connection per request, so that no test inherits a socket another test broke.
    response.shouldKeepAlive = false;
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      onRequest(request, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    closeAllConnections: () => server.closeAllConnections(),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers with a JSON body and the given status. */
export const json =
  (status: number, body: unknown): Handler =>
  (_request, _body, response) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

/** Answers with the text as it is (malformed JSON, HTML error pages, ...). */
export const raw =
  (status: number, text: string, contentType = 'application/json'): Handler =>
  (_request, _body, response) => {
    response.writeHead(status, { 'content-type': contentType }).end(text);
  };
