import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';

// Every answer a test world sends is checked against the service's own /openapi.json, the document
// clients are generated from (issue 39 item 9): its status must be one the operation documents, and
// its body must match that status's schema. A client found `"provider": null` in answers whose enum
// had no null; this keeps such a drift from coming back unseen. Test code only: the service itself
// never validates its answers.
//
// The document is OpenAPI 3.0, whose Schema Object is JSON Schema plus `nullable`. It is read as
// OpenAPI 3.0.3 says: `nullable: true` lets a value be null, but an `enum` still has to list null
// for null to be one of its values. So `type: T, nullable: true` becomes `type: [T, "null"]` with
// the enum as written, and a nullable schema without a type admits null beside what it describes.

export type AnswerMismatch = {
  /** The operationId, or the method and path of an operation without one. */
  operation: string;
  status: number;
  /** What is wrong: an undocumented status, a body that is no JSON, or the schema's errors. */
  problem: string;
};

export type AnswerCheck = {
  /** The answers that did not match the document so far, in the order they were sent. */
  readonly mismatches: readonly AnswerMismatch[];
  /** How many answers were checked against a schema (the checker's own test reads it). */
  readonly checked: number;
  /** Throws an error listing every mismatch, if there is one. */
  assertNone(): void;
};

type Node = Record<string, unknown>;
type ResponseObject = { $ref?: string; content?: Record<string, { schema?: unknown }> };
type Operation = { operationId?: string; responses?: Record<string, ResponseObject> };
type Document = Node & { paths?: Record<string, Record<string, Operation>> };

const documentId = 'service-openapi';

/**
 * Adds an onSend hook to `app` (before it is ready) that checks every answer of a documented
 * operation. The document is the app's own (`app.swagger()`), read once the app is ready: read at
 * the first answer, it held that answer up for seconds on a busy machine, and the first answer is
 * often the sandbox's SMS, which the service then gave up waiting for.
 */
export function checkAnswers(app: FastifyInstance): AnswerCheck {
  const mismatches: AnswerMismatch[] = [];
  let checked = 0;
  let spec: Spec | undefined;
  app.addHook('onReady', async () => {
    spec = loadSpec(app.swagger() as Document);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // A HEAD has no body; a request no route answered (404 from the not-found handler) has no operation.
    const route = request.routeOptions.url;
    if (request.method === 'HEAD' || route === undefined) return payload;
    if (spec === undefined) throw new Error('the answer check was added after the app was ready');
    const result = spec.check(request.method, route, reply.statusCode, payload);
    if (result === 'undocumented route') return payload;
    checked += 1;
    if (result !== null) mismatches.push(result);
    return payload;
  });
  return {
    get mismatches() {
      return mismatches;
    },
    get checked() {
      return checked;
    },
    assertNone() {
      if (mismatches.length === 0) return;
      const lines = mismatches.map((m) => `  ${m.operation} ${m.status}: ${m.problem}`);
      throw new Error(
        `${mismatches.length} ${mismatches.length === 1 ? 'answer does' : 'answers do'} not match /openapi.json:\n${lines.join('\n')}`,
      );
    },
  };
}

type Spec = {
  /** null when the answer matches; 'undocumented route' for a route the document does not hold. */
  check(
    method: string,
    route: string,
    status: number,
    payload: unknown,
  ): AnswerMismatch | null | 'undocumented route';
};

function loadSpec(document: Document): Spec {
  const schema = toJsonSchema(document) as Document;
  // The document is no JSON Schema as a whole, only its schemas are: it is not checked as one.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  ajv.addSchema({ ...schema, $id: documentId });
  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = validators.get(pointer);
    if (validate === undefined) {
      validate = ajv.getSchema(`${documentId}#${pointer.split('/').map(encodeURIComponent).join('/')}`);
      if (validate === undefined) throw new Error(`no schema at ${pointer} in /openapi.json`);
      validators.set(pointer, validate);
    }
    return validate;
  };
  const escapeSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

  return {
    check(method, route, status, payload) {
      // Fastify writes a path parameter as :name, OpenAPI as {name}.
      const template = route.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const verb = method.toLowerCase();
      const operation = schema.paths?.[template]?.[verb];
      if (operation === undefined) return 'undocumented route';
      const name = operation.operationId ?? `${method} ${template}`;
      const mismatch = (problem: string): AnswerMismatch => ({ operation: name, status, problem });
      const responses = operation.responses ?? {};
      const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
      if (key === undefined) {
        return mismatch(
          `status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`,
        );
      }
      let pointer = `/paths/${escapeSegment(template)}/${verb}/responses/${key}`;
      const ref = responses[key]?.$ref;
      if (typeof ref === 'string') pointer = ref.slice(1);
      const response = at(schema, pointer) as ResponseObject;
      if (response.content?.['application/json']?.schema === undefined) return null;
      const text =
        typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
      // A stream (a file) is not JSON the document describes.
      if (text === null) return mismatch('the answer is a stream where the document describes JSON');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        return mismatch(`the answer is no JSON: ${text.slice(0, 200)}`);
      }
      const validate = validatorAt(`${pointer}/content/application~1json/schema`);
      if (validate(body)) return null;
      return mismatch(`${describeErrors(validate.errors)} in ${JSON.stringify(body).slice(0, 500)}`);
    },
  };
}

function at(document: unknown, pointer: string): unknown {
  let node = document;
  for (const segment of pointer.split('/').slice(1)) {
    node = (node as Node | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

/** OpenAPI 3.0's `nullable` as JSON Schema, read strictly (see the comment at the top). */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) out[key] = toJsonSchema(value);
  if (!('nullable' in out)) return out;
  const { nullable, ...rest } = out;
  if (nullable !== true) return rest;
  if (typeof rest.type === 'string') return { ...rest, type: [rest.type, 'null'] };
  return { anyOf: [rest, { type: 'null' }] };
}

/** The formats the document uses, so that a uuid or an instant of the wrong shape is caught too. */
function addFormats(ajv: Ajv): void {
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) &&
      !Number.isNaN(Date.parse(value)),
  });
  ajv.addFormat('date', {
    type: 'string',
    validate: (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
  });
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+$/);
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      const allowed = e.keyword === 'enum' ? ` ${JSON.stringify(e.params.allowedValues)}` : '';
      const extra = e.keyword === 'additionalProperties' ? ` (${String(e.params.additionalProperty)})` : '';
      return `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${allowed}${extra}`;
    })
    .join('; ');
}
