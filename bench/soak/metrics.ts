// What /metrics says before and after the soak: whatever billrail_* figures the service exports at
// run time (the money metrics are another branch's; no name is assumed), each series summed over
// the API processes, request-duration buckets left out.

export type Figures = Map<string, number>;

function parse(text: string, into: Figures): void {
  for (const line of text.split('\n')) {
    if (!line.startsWith('billrail_') || line.includes('_bucket{')) continue;
    const space = line.lastIndexOf(' ');
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    if (Number.isFinite(value)) into.set(series, (into.get(series) ?? 0) + value);
  }
}

export async function readFigures(apis: string[]): Promise<Figures> {
  const figures: Figures = new Map();
  for (const api of apis) {
    try {
      const response = await fetch(`${api}/metrics`, { signal: AbortSignal.timeout(10_000) });
      parse(await response.text(), figures);
    } catch {
      // A process that does not answer has no figures: the table shows the others'.
    }
  }
  return figures;
}

/** Markdown rows: series, before, after; HTTP request counters summed per status code. */
export function figuresTable(before: Figures, after: Figures): string {
  const folded = (figures: Figures) => {
    const out = new Map<string, number>();
    for (const [series, value] of figures) {
      const name = series.startsWith('billrail_http_requests_total')
        ? `billrail_http_requests_total{status="${/status(?:_code)?="(\d+)"/.exec(series)?.[1] ?? '?'}"}`
        : series;
      if (series.startsWith('billrail_http_request_duration_seconds')) continue;
      out.set(name, (out.get(name) ?? 0) + value);
    }
    return out;
  };
  const b = folded(before);
  const a = folded(after);
  const names = [...new Set([...b.keys(), ...a.keys()])].sort();
  const rows = names.map((n) => `| \`${n}\` | ${b.get(n) ?? '–'} | ${a.get(n) ?? '–'} |`);
  return ['| series | before | after |', '|---|---|---|', ...rows].join('\n');
}
