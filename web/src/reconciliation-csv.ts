// A reconciliation run as a CSV file an operator opens in a spreadsheet (API.md 17.5): one row per
// item, both sides and the resolution. RFC 4180 (CRLF lines, a field quoted when it holds a comma, a
// quote or a line break, its quotes doubled), UTF-8 with a byte order mark, without which Excel reads
// the file as the machine's legacy code page and garbles ₦ and names. The shapes are written out here
// rather than taken from the API client so that the builder runs (and is tested) outside a browser.

export type CsvRecord = {
  status: string;
  amount?: number | undefined;
  at?: string | undefined;
  userId?: string | undefined;
  kind?: string | undefined;
  providerReference?: string | undefined;
  recipient?: string | undefined;
  note?: string | undefined;
};

export type CsvItem = {
  bucket: string;
  reference: string;
  ours?: CsvRecord | undefined;
  theirs?: CsvRecord | undefined;
  resolution?: { action: string; reason: string; outcome: string; by: string; at: string } | undefined;
};

export const csvHeader = [
  'bucket',
  'reference',
  'our status',
  'our amount',
  'our date',
  'our kind',
  'user id',
  'their status',
  'their amount',
  'their date',
  'their kind',
  'provider reference',
  'recipient',
  'note',
  'resolution action',
  'resolution reason',
  'resolution outcome',
  'resolved by',
  'resolved at',
] as const;

/** A cell: text as given (guarded against formulas), or an amount in naira. */
type Cell = string | number | undefined;

/**
 * A spreadsheet runs a cell that starts with =, +, - or @ as a formula (CSV injection): a provider's
 * note or a reason typed by someone is data, so it gets a leading apostrophe, which the spreadsheet
 * shows as text. A tab or a carriage return first is guarded too: some spreadsheets drop it and then
 * read what follows as the cell's start.
 */
const formulaStart = /^[=+\-@\t\r]/;

/** An amount as a spreadsheet reads a number: naira with 2 decimals, no sign of currency, no separators. */
const amountText = (naira: number): string => naira.toFixed(2);

function field(cell: Cell): string {
  if (cell === undefined) return '';
  // An amount is a number, not text: a negative one keeps its minus and is never guarded.
  const text = typeof cell === 'number' ? amountText(cell) : formulaStart.test(cell) ? `'${cell}` : cell;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The notes of both sides in one column, each said whose when both have one. */
function note(item: CsvItem): string | undefined {
  const ours = item.ours?.note;
  const theirs = item.theirs?.note;
  if (ours !== undefined && theirs !== undefined && ours !== theirs)
    return `ours: ${ours}; theirs: ${theirs}`;
  return ours ?? theirs;
}

function row(item: CsvItem): Cell[] {
  const { ours, theirs, resolution } = item;
  return [
    item.bucket,
    item.reference,
    ours?.status,
    ours?.amount,
    ours?.at,
    ours?.kind,
    ours?.userId ?? theirs?.userId,
    theirs?.status,
    theirs?.amount,
    theirs?.at,
    theirs?.kind,
    theirs?.providerReference ?? ours?.providerReference,
    ours?.recipient ?? theirs?.recipient,
    note(item),
    resolution?.action,
    resolution?.reason,
    resolution?.outcome,
    resolution?.by,
    resolution?.at,
  ];
}

const byteOrderMark = '\uFEFF';

/** The whole file's text, the byte order mark first: a header line, then one line per item. */
export function reconciliationCsv(items: readonly CsvItem[]): string {
  const lines = [csvHeader.map(field), ...items.map((item) => row(item).map(field))];
  return `${byteOrderMark}${lines.map((cells) => cells.join(',')).join('\r\n')}\r\n`;
}

/** Africa/Lagos keeps UTC+1 all year (no summer time), so its calendar day is a fixed shift away. */
const lagosOffsetMs = 3_600_000;

/** The Africa/Lagos calendar day of an instant, YYYY-MM-DD. */
export const lagosDay = (instant: Date): string =>
  new Date(instant.getTime() + lagosOffsetMs).toISOString().slice(0, 10);

/** reconciliation-<source>-<the Lagos day the period starts>.csv */
export const reconciliationFileName = (run: { source: string; from: string }): string =>
  `reconciliation-${run.source}-${lagosDay(new Date(run.from))}.csv`;
