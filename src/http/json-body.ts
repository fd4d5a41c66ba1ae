import type { FastifyInstance } from 'fastify';
import { scan } from 'secure-json-parse';
import { AppError } from '../errors.ts';

// The JSON body parser of the operations and the sandbox. Like Fastify's own it refuses
// `__proto__` keys and `constructor.prototype` pairs anywhere in a body (prototype poisoning), but
// it tells the client which of the three went wrong: not JSON, a `__proto__` key, or a
// `constructor.prototype`. Fastify's says "not valid JSON" for all three, which sends a client
// looking for a syntax error that is not there.

type Done = (error: Error | null, body?: unknown) => void;

function parseJsonBody(text: string): unknown {
  // A leading byte order mark is tolerated, as Fastify's parser does.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === '') throw new AppError('VALIDATION_ERROR', 'the body is empty; send {"data": {...}}');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new AppError('VALIDATION_ERROR', 'the body is not valid JSON');
  }
  if (value === null || typeof value !== 'object') return value;
  try {
    scan(value, { protoAction: 'error', constructorAction: 'ignore' });
  } catch {
    throw new AppError('VALIDATION_ERROR', 'the body holds a "__proto__" key, which is refused');
  }
  try {
    scan(value, { protoAction: 'ignore', constructorAction: 'error' });
  } catch {
    throw new AppError(
      'VALIDATION_ERROR',
      'the body holds a "constructor" object with a "prototype" key, which is refused',
    );
  }
  return value;
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
