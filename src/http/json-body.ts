import type { FastifyInstance } from 'fastify';
import { parse, scan } from 'secure-json-parse';
import { AppError } from '../errors.ts';

// The JSON body parser of the operations and the sandbox. Like Fastify's own it refuses
// `__proto__` keys and `constructor.prototype` pairs anywhere in a body (prototype poisoning), but
// it tells the client which of the three went wrong: not JSON, a `__proto__` key, or a
// `constructor.prototype`. Fastify's says "not valid JSON" for all three, which sends a client
// looking for a syntax error that is not there.

type Done = (error: Error | null, body?: unknown) => void;

function parseJsonBody(text: string): unknown {
  if (text.trim() === '' || text === '\ufeff') {
    throw new AppError('VALIDATION_ERROR', 'the body is empty; send {"data": {...}}');
  }
  try {
    // The library's own fast path: a body with no key that looks like either is not walked.
    return parse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    // Refused: either not JSON, or JSON holding one of the two. Tell the client which.
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new AppError('VALIDATION_ERROR', 'the body is not valid JSON');
  }
  try {
    scan(value as object, { protoAction: 'error', constructorAction: 'ignore' });
  } catch {
    throw new AppError('VALIDATION_ERROR', 'the body holds a "__proto__" key, which is refused');
  }
  throw new AppError(
    'VALIDATION_ERROR',
    'the body holds a "constructor" object with a "prototype" key, which is refused',
  );
}

/** Replaces Fastify's JSON parser in this scope (and the scopes registered after it). */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done: Done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error);
    }
  });
}
