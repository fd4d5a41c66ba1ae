import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.ts';
import { type ErrorResponse, fromAppError } from './errors.ts';

// Requests Node's HTTP parser refuses before Fastify sees them: headers or a URL over Node's
// header limit (16 KiB), a request that did not arrive within the request timeout, bytes that are
// not HTTP. They get the contract's error envelope like every other refusal. The parser cannot go
// on after such an error (the rest of the request is still unread), so the answer says
// `Connection: close`: a client that pools keep-alive connections then opens a new one for its next
// request instead of sending it into a connection that is about to close.

/** How long a refused connection may keep sending what we no longer read before it is cut. */
const refusedSocketLingerMs = 2_000;

/**
 * The answer to what the parser refused. HTTP fixes the statuses of the first two (431, 408), which
 * the contract's codes do not have: the nearest code goes with the protocol's status.
 */
function refusal(error: { code?: string }): ErrorResponse {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        ...fromAppError(
          new AppError(
            'PAYLOAD_TOO_LARGE',
            'the request headers or query string are too large (16 KiB at most); send large inputs as a POST body',
          ),
        ),
        status: 431,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        ...fromAppError(new AppError('VALIDATION_ERROR', 'the request did not arrive in time')),
        status: 408,
      };
    default:
      return fromAppError(new AppError('VALIDATION_ERROR', 'the request is malformed'));
  }
}

/** Fastify's `clientErrorHandler`: answers in the envelope, then closes the connection cleanly. */
export function answerClientError(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Duplex,
): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ err: error }, 'request refused by the HTTP parser');
  const { status, body } = refusal(error);
  const json = JSON.stringify(body);
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // end(), not destroy(): destroying with the client's unread bytes pending makes the kernel send a
  // reset, and the client may lose the answer. The bytes still arriving are read and dropped
  // until the client closes its side, or the linger time runs out.
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(json)}\r\n` +
      'Connection: close\r\n\r\n' +
      json,
  );
  socket.resume();
  setTimeout(() => socket.destroy(), refusedSocketLingerMs).unref();
}
