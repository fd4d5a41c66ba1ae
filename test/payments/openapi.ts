import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';

// Paystack's OpenAPI 3.0 document (test/fixtures/paystack-openapi.yaml, a copy of
// shared/reference/paystack-openapi.yaml kept in the repository so the tests need nothing outside
// it) as JSON Schema validators for the operations' request bodies and responses.
//
// OpenAPI 3.0's Schema Object is JSON Schema plus `nullable`, which Ajv reads only beside a `type`
// (and then does not add null to an `enum`). So the document is rewritten once: `type: T, nullable:
// true` becomes `type: [T, "null"]` (and null joins the enum), and a `nullable` without a type is
// dropped, because in OpenAPI 3.0 it constrains nothing. Everything else is validated as written.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const specPath = path.resolve(repoRoot, 'test', 'fixtures', 'paystack-openapi.yaml');
const specId = 'paystack-openapi';

type Node = Record<string, unknown>;
type Parameter = { name?: string; in?: string; schema?: { type?: string; enum?: unknown[] } };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Node }> };
  responses?: Record<string, Node>;
  operationId?: string;
};

export type Exchange = {
  method: string;
  /** The path under the provider's base URL, without the query. */
  path: string;
  requestBody: unknown;
  /** The query parameters as sent (a GET's inputs). */
  query: Record<string, string>;
  status: number;
  responseBody: unknown;
};

export type Spec = {
  /** The path template (e.g. /transaction/verify/{reference}) and operation a request went to. */
  operationFor(method: string, requestPath: string): { template: string; operation: Operation } | null;
  /** The validator of the operation's JSON request body, and the name of its schema. */
  requestValidator(
    method: string,
    template: string,
  ): { validate: ValidateFunction; schemaName: string } | null;
  /** The validator of the operation's JSON answer for a status (no `default`), and its schema's name. */
  responseValidator(
    method: string,
    template: string,
    status: number,
  ): { validate: ValidateFunction; schemaName: string } | null;
  /** A validator for any JSON pointer into the document (e.g. /components/schemas/VerifyResponse). */
  validatorAt(pointer: string): ValidateFunction;
  /** The property names a schema declares at its top level (through $ref and allOf). */
  declaredProperties(pointer: string): Set<string>;
  /**
   * What is wrong with a request's query parameters under the operation's `in: query` parameters:
   * one that it does not declare, or a value that is not of the declared type (query text read as
   * an integer, a boolean, or one of an enum's strings). Empty when nothing is.
   */
  queryProblems(operation: Operation, query: Record<string, string>): string[];
};

export function loadSpec(): Spec {
  if (!existsSync(specPath)) {
    throw new Error(`Paystack's OpenAPI document is missing: expected it at ${specPath} (test/fixtures/)`);
  }
  const document = toJsonSchema(parse(readFileSync(specPath, 'utf8'))) as Node & {
    paths: Record<string, Record<string, Operation>>;
  };
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...document, $id: specId });
  const validators = new Map<string, ValidateFunction>();

  function validatorAt(pointer: string): ValidateFunction {
    let validate = validators.get(pointer);
    if (validate === undefined) {
      const fragment = pointer.split('/').map(encodeURIComponent).join('/');
      validate = ajv.getSchema(`${specId}#${fragment}`);
      if (validate === undefined) throw new Error(`no schema at ${pointer}`);
      validators.set(pointer, validate);
    }
    return validate;
  }

  function at(pointer: string): unknown {
    let node: unknown = document;
    for (const segment of pointer.split('/').slice(1)) {
      const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
      node = (node as Node | undefined)?.[key];
    }
    return node;
  }

  /** Follows a `$ref` (local to the document) to the pointer it names. */
  function follow(pointer: string): string {
    const node = at(pointer) as Node | undefined;
    const ref = node?.$ref;
    return typeof ref === 'string' && ref.startsWith('#/') ? follow(ref.slice(1)) : pointer;
  }

  const escapeSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

  function jsonSchemaOf(pointer: string): { validate: ValidateFunction; schemaName: string } | null {
    const content = at(`${pointer}/content/application~1json/schema`);
    if (content === undefined) return null;
    const schemaPointer = follow(`${pointer}/content/application~1json/schema`);
    return { validate: validatorAt(schemaPointer), schemaName: schemaPointer.split('/').at(-1) ?? '' };
  }

  return {
    operationFor(method, requestPath) {
      let best: { template: string; operation: Operation; literal: number } | null = null;
      for (const [template, item] of Object.entries(document.paths)) {
        const operation = item[method.toLowerCase()];
        if (operation === undefined) continue;
        const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        if (!pattern.test(requestPath)) continue;
        const literal = template.split('/').filter((s) => s !== '' && !s.startsWith('{')).length;
        if (best === null || literal > best.literal) best = { template, operation, literal };
      }
      return best === null ? null : { template: best.template, operation: best.operation };
    },
    requestValidator(method, template) {
      return jsonSchemaOf(`/paths/${escapeSegment(template)}/${method.toLowerCase()}/requestBody`);
    },
    responseValidator(method, template, status) {
      const pointer = `/paths/${escapeSegment(template)}/${method.toLowerCase()}/responses/${status}`;
      if (at(pointer) === undefined) return null;
      return jsonSchemaOf(follow(pointer));
    },
    validatorAt,
    queryProblems(operation, query) {
      const declared = new Map(
        (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.schema ?? {}]),
      );
      const problems: string[] = [];
      for (const [name, value] of Object.entries(query)) {
        const schema = declared.get(name);
        if (schema === undefined) {
          problems.push(`${name} is no query parameter of the operation`);
          continue;
        }
        const fits =
          schema.type === 'integer'
            ? /^-?\d+$/.test(value)
            : schema.type === 'number'
              ? value.trim() !== '' && Number.isFinite(Number(value))
              : schema.type === 'boolean'
                ? value === 'true' || value === 'false'
                : schema.enum === undefined || schema.enum.includes(value);
        if (!fits) problems.push(`${name}=${value} is not a ${schema.type ?? 'value'} the document allows`);
      }
      return problems;
    },
    declaredProperties(pointer) {
      const names = new Set<string>();
      const visit = (p: string) => {
        const target = follow(p);
        const node = at(target) as Node;
        for (const name of Object.keys((node.properties as Node | undefined) ?? {})) names.add(name);
        const allOf = node.allOf;
        if (Array.isArray(allOf)) for (let i = 0; i < allOf.length; i++) visit(`${target}/allOf/${i}`);
      };
      visit(pointer);
      return names;
    },
  };
}

/** OpenAPI 3.0's `nullable` as JSON Schema (see the comment at the top). */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== 'object') return node;
  const out: Node = {};
  for (const [key, value] of Object.entries(node)) out[key] = toJsonSchema(value);
  if (typeof out.nullable === 'boolean') {
    const nullable = out.nullable;
    delete out.nullable;
    if (nullable && typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    }
  }
  return out;
}

export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`).join('; ');
}
