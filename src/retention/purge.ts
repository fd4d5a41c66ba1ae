// Purging in small batches (decision 0054): each batch is one short DELETE of at most batchMax rows,
// its own transaction, so no lock is held for long and replication and vacuum keep up. The tables
// take turns, a batch each, so that one table's backlog does not keep the others waiting; a run
// stops once its time budget is spent, and the next run carries on where the rows still are.

/** One table's rule: deletes one batch of its rows past their period, answering how many. */
export type PurgeRule = {
  /** The table (and which of its rows), as the log and the report name it. */
  name: string;
  purgeBatch(batchMax: number): Promise<number>;
};

export type PurgeReport = {
  /** Per rule: the rows deleted and the batches (DELETE statements) it took. */
  purged: Record<string, { rows: number; batches: number }>;
  /** False when the time budget ran out before every rule was done: the next run carries on. */
  complete: boolean;
};

export type PurgeLimits = {
  /** Rows one DELETE takes at most. */
  batchMax: number;
  /** The time a run may take; checked between batches, so a run ends at most one batch after it. */
  budgetMs: number;
  /** A monotonic time in ms (performance.now): the budget is the run's own time, not the sandbox clock's. */
  elapsedMs?: () => number;
};

export async function purgeInBatches(rules: readonly PurgeRule[], limits: PurgeLimits): Promise<PurgeReport> {
  const elapsedMs = limits.elapsedMs ?? (() => performance.now());
  const started = elapsedMs();
  const purged: PurgeReport['purged'] = Object.fromEntries(
    rules.map((rule) => [rule.name, { rows: 0, batches: 0 }]),
  );
  let left = [...rules];
  while (left.length > 0) {
    const next: PurgeRule[] = [];
    for (const rule of left) {
      if (elapsedMs() - started >= limits.budgetMs) return { purged, complete: false };
      const rows = await rule.purgeBatch(limits.batchMax);
      const tally = purged[rule.name]!;
      tally.rows += rows;
      tally.batches += 1;
      // A batch short of full found the last of the rows past their period.
      if (rows === limits.batchMax) next.push(rule);
    }
    left = next;
  }
  return { purged, complete: true };
}
