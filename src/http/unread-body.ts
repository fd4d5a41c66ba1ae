import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// An answer that goes out before its request's body has all arrived: a body over the cap (413),
// refused as soon as Content-Length says so or the bytes read pass the cap, or a refusal before the
// body is read at all (401, 415). Fastify marks a body-parse refusal `Connection: close`, and Node
// then closes the socket as soon as the answer is written, with the rest of the body still coming:
// the unread bytes make the kernel reset the connection, and a client still writing gets EPIPE or
// ECONNRESET instead of the answer waiting for it (found with 12 MiB submitKycTier3 and 2 MiB
// createTopupIntent bodies sent at full speed).
//
// So, as nginx's lingering close does, the rest of the body is read and thrown away after the
// answer, and the connection stays usable once it has all come (its end is known from its
// Content-Length or chunked framing, so nothing of it is taken for a next request). Bounded: a
// client that keeps sending past UNREAD_BODY_DRAIN_BYTES_MAX more bytes, or for longer than
// UNREAD_BODY_DRAIN_MS, is cut off. So is one whose Content-Length already says it will: it too is
// read up to the bound first, since closing at once, its bytes still arriving, would reset the
// connection under the answer just sent (a client writing fast then lost it now and then).

/** The most of an unread body read and discarded after the answer, in bytes. */
export const UNREAD_BODY_DRAIN_BYTES_MAX = 32 * 1024 * 1024;
/** How long the rest of an unread body may take to arrive after the answer. */
export const UNREAD_BODY_DRAIN_MS = 10_000;

type DrainLimits = { bytesMax: number; ms: number };

/** Arms the bounded drain when the answer goes out before the request's body was all received. */
function drainUnreadBody(request: FastifyRequest, reply: FastifyReply, limits: DrainLimits): void {
  const incoming = request.raw;
  const socket = incoming.socket;
  if (incoming.complete || socket === null || socket.destroyed) return;
  // Node closes right after an answer marked `Connection: close`; this one waits for the body.
  reply.removeHeader('connection');
  let drained = 0;
  const cutOff = () => {
    disarm();
    socket.destroy();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.bytesMax) cutOff();
  };
  const timer = setTimeout(cutOff, limits.ms);
  timer.unref();
  function disarm() {
    clearTimeout(timer);
    incoming.removeListener('data', onData);
    incoming.removeListener('end', disarm);
    socket?.removeListener('close', disarm);
  }
  // Listening makes the body flow (and keeps Node from swapping in its own listener-less dump); the
  // bytes are counted and dropped.
  incoming.on('data', onData);
  incoming.once('end', disarm);
  socket.once('close', disarm);
  incoming.resume();
}

/** `limits` for tests of the bounds; the service uses the defaults above. */
export function registerUnreadBodyDrain(
  app: FastifyInstance,
  limits: DrainLimits = { bytesMax: UNREAD_BODY_DRAIN_BYTES_MAX, ms: UNREAD_BODY_DRAIN_MS },
): void {
  app.addHook('onSend', async (request, reply, payload) => {
    drainUnreadBody(request, reply, limits);
    return payload;
  });
}
