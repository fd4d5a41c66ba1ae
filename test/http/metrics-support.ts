import assert from 'node:assert/strict';
import type { Reachable } from '../helpers/world.ts';

// Reading /metrics as Prometheus does: the text exposition format, one sample a line
// (`name{label="value",...} number`), read into samples a test can look up by name and labels.

export type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of one scrape of the service's /metrics. */
export async function scrape(world: Reachable): Promise<Sample[]> {
  const response = await fetch(`${world.baseUrl}/metrics`);
  assert.equal(response.status, 200, 'GET /metrics answers');
  return parseExposition(await response.text());
}

/** Parses the text exposition format; comments (# HELP, # TYPE) are left out. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match !== null, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!;
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the sample with this name and these labels (others may be present too); undefined if none. */
export function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(found.length <= 1, `one sample of ${name} ${JSON.stringify(labels)}, found ${found.length}`);
  return found[0]?.value;
}

/** The value, 0 when the series is absent (a counter not incremented yet). */
export const countOf = (samples: Sample[], name: string, labels: Record<string, string> = {}): number =>
  sampleValue(samples, name, labels) ?? 0;

/** The names of every metric the service exposes (histograms by their family name too). */
export function metricNames(samples: Sample[]): Set<string> {
  const names = new Set<string>();
  for (const { name } of samples) {
    names.add(name);
    names.add(name.replace(/_(bucket|sum|count)$/, ''));
  }
  return names;
}
