import fc from 'fast-check';

// fast-check arbitraries from the JSON Schemas of /openapi.json, so that a fuzz test covers every
// operation the service documents (a new operation is fuzzed the day it is added), and hostile
// variations of those inputs: the values that passed a schema once and still reached the database.

export type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  nullable?: boolean;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean | number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/** Arrays and strings are kept short: the point is the values' kinds, not their bulk. */
const itemsMax = 4;
const freeStringLengthMax = 24;

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.pattern !== undefined) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern));
    } catch {
      // A pattern fast-check cannot generate from: free text, which the schema will mostly refuse.
    }
  }
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl();
  }
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(
    minLength,
    Math.min(schema.maxLength ?? freeStringLengthMax, freeStringLengthMax),
  );
  return fc.string({ minLength, maxLength });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1_000_000;
  const max = schema.maximum ?? 10_000_000;
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  // Naira amounts: whole or with two decimals, as clients send them.
  return fc.oneof(
    fc.integer({ min: Math.ceil(min), max: Math.floor(max) }),
    fc.integer({ min: Math.ceil(min * 100), max: Math.floor(max * 100) }).map((kobo) => kobo / 100),
  );
}

/** Values the schema describes (most of them valid; a pattern or refinement may still refuse some). */
export function arbitraryOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  const plain = plainArbitrary(schema);
  return schema.nullable === true ? fc.option(plain, { nil: null }) : plain;
}

function plainArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) return fc.oneof(...alternatives.map(arbitraryOf));
  if (schema.allOf !== undefined && schema.allOf.length > 0) return arbitraryOf(schema.allOf[0]!);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryOf(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? itemsMax, itemsMax)),
      });
    case 'object': {
      const properties = schema.properties ?? {};
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) record[name] = arbitraryOf(property);
      return fc.record(record, { requiredKeys: (schema.required ?? []).filter((k) => k in properties) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that once passed a schema somewhere, or that no schema should let through. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    '',
    ' ',
    '\u0000',
    'x'.repeat(5_000),
    '\ud800',
    '٠٨٠٣١٢٣٤٥٦٧',
    "' OR 1=1 --",
    '<script>alert(1)</script>',
    '1e309',
    -1,
    0,
    1e308,
    2 ** 53 + 2,
    0.001,
    1.005,
    null,
    true,
    [],
    {},
    [[[]]],
    { $ne: '' },
  ),
  fc.string().map((s) => `${s}\u0000${s}`),
);

export type Hostile = { value: unknown; nul: boolean; prototypeKey: '__proto__' | 'constructor' | null };

/** Every path to a leaf or object of a JSON value (the root is []). */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [at];
  const children = Object.entries(value).flatMap(([key, child]) =>
    paths(child, [...at, Array.isArray(value) ? Number(key) : key]),
  );
  return [at, ...children];
}

function valueAt(value: unknown, path: Array<string | number>): unknown {
  return path.reduce<unknown>((v, key) => (v as Record<string, unknown>)[String(key)], value);
}

function replaceAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string, unknown>;
  copy[String(head)] = replaceAt(copy[String(head)], rest, replacement);
  return copy;
}

/** A copy with a key added as an own property, as JSON.parse makes it (assignment could set the prototype). */
function withOwnKey(target: unknown, key: string, child: unknown): unknown {
  const base = target !== null && typeof target === 'object' && !Array.isArray(target) ? target : {};
  const copy = JSON.parse(JSON.stringify(base)) as object;
  Object.defineProperty(copy, key, { value: child, enumerable: true, writable: true, configurable: true });
  return copy;
}

export function containsNul(value: unknown): boolean {
  return JSON.stringify(value).includes('\\u0000');
}

/**
 * A valid-looking input with one thing wrong: a value somewhere replaced by a hostile one, a NUL
 * put into a string, an unknown field, or a `__proto__` / `constructor.prototype` key.
 */
export function hostileVariant(valid: fc.Arbitrary<unknown>): fc.Arbitrary<Hostile> {
  return fc
    .tuple(
      valid,
      fc.nat(),
      hostileValue,
      fc.constantFrom('replace', 'nul', 'unknown', '__proto__', 'constructor'),
    )
    .map(([input, pick, replacement, how]) => {
      const targets = paths(input);
      const path = targets[pick % targets.length]!;
      let value: unknown;
      let prototypeKey: Hostile['prototypeKey'] = null;
      switch (how) {
        case 'replace':
          value = replaceAt(input, path, replacement);
          break;
        case 'nul': {
          const strings = targets.filter((p) => typeof valueAt(input, p) === 'string');
          const at = strings.length > 0 ? strings[pick % strings.length]! : path;
          const original = valueAt(input, at);
          const text = typeof original === 'string' ? original : '';
          const cut = pick % (text.length + 1);
          value = replaceAt(input, at, `${text.slice(0, cut)}\u0000${text.slice(cut)}`);
          break;
        }
        case 'unknown':
          value = withOwnKey(input, 'bogusField', replacement);
          break;
        case '__proto__':
          value = withOwnKey(input, '__proto__', { admin: true });
          prototypeKey = '__proto__';
          break;
        case 'constructor':
          value = withOwnKey(input, 'constructor', { prototype: { admin: true } });
          prototypeKey = 'constructor';
          break;
      }
      return { value, nul: containsNul(value), prototypeKey };
    });
}

// The operations of /openapi.json with their input schemas, as a generated client reads them.

export type Documented = {
  name: string;
  method: 'GET' | 'POST';
  auth: 'public' | 'user' | 'admin';
  input: JsonSchema;
};

type OpenApiOperation = {
  operationId: string;
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; required?: boolean; schema: JsonSchema }>;
  requestBody?: { content: { 'application/json': { schema: { properties: { data: JsonSchema } } } } };
};

/** The operations and their input schemas, read from the document as a generated client would. */
export function documentedOperations(document: {
  paths: Record<string, { get?: OpenApiOperation; post?: OpenApiOperation }>;
}): Documented[] {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/_serverFn/'))
    .map(([path, item]) => {
      const method = item.post !== undefined ? 'POST' : 'GET';
      const op = (item.post ?? item.get)!;
      if (op.operationId !== path.slice('/_serverFn/'.length))
        throw new Error(`${path} is ${op.operationId}`);
      const input: JsonSchema =
        method === 'POST'
          ? op.requestBody!.content['application/json'].schema.properties.data
          : {
              type: 'object',
              properties: Object.fromEntries(
                (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.schema]),
              ),
              required: (op.parameters ?? [])
                .filter((p) => p.in === 'query' && p.required === true)
                .map((p) => p.name),
            };
      const isPublic = op.security === undefined || op.security.length === 0;
      const auth = isPublic ? 'public' : op.operationId.startsWith('admin') ? 'admin' : 'user';
      return { name: op.operationId, method, auth, input };
    });
}
