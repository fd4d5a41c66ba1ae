// The batches of the purchase path send their rows as arrays, one per column (`unnest($1::text[],
// ...)`, `= any($1::uuid[])`): every purchase is a dozen or so array elements across its statements.
// node-postgres turns an array into PostgreSQL's text form element by element: two regular
// expression replaces and four string concatenations each, leaving a deep chain of joined strings
// that is flattened again when the message is written. Under purchase load that was the largest
// single allocator of the process: about 23 of the 250 KB each purchase allocated (a sampling
// allocation profile of bench/purchase-cpu.ts), garbage that costs scavenges in a young generation
// docs/memory.md caps to keep RSS under 300 MB. The same text made with one join: about 10 KB.

/** Only these need a backslash inside a quoted array element (PostgreSQL's array input syntax). */
const QUOTE_OR_BACKSLASH = /[\\"]/;
const QUOTES_AND_BACKSLASHES = /[\\"]/g;

/**
 * PostgreSQL's text form of a one-dimensional array of strings, numbers, bigints, booleans and
 * nulls: the very text node-postgres makes of it (every element quoted, `\` and `"` escaped, null
 * and undefined as NULL; test/db/array-literal.test.ts holds the two equal). Undefined for an array
 * with any other element (a Date, a Buffer, an object, a nested array): node-postgres's own rules
 * for those are left to it.
 */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  const elements = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      elements[i] = 'NULL';
      continue;
    }
    const kind = typeof value;
    if (kind !== 'string' && kind !== 'bigint' && kind !== 'number' && kind !== 'boolean') return undefined;
    const text = String(value);
    elements[i] = QUOTE_OR_BACKSLASH.test(text)
      ? `"${text.replace(QUOTES_AND_BACKSLASHES, '\\$&')}"`
      : `"${text}"`;
  }
  return `{${elements.join(',')}}`;
}

/**
 * The values of a statement with each array of plain elements given as its text (arrayLiteral);
 * the same array when there is none, so a statement without arrays allocates nothing more.
 */
export function withArrayLiterals(values: readonly unknown[]): readonly unknown[] {
  let converted: unknown[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (!Array.isArray(value)) continue;
    const literal = arrayLiteral(value);
    if (literal === undefined) continue;
    converted ??= [...values];
    converted[i] = literal;
  }
  return converted ?? values;
}
