import assert from 'node:assert/strict';

/** How long a condition may take before the test fails instead of hanging. */
const untilTimeoutMs = 30_000;

/**
 * Yields to the event loop until the condition holds: waits on the state an in-process server
 * changes, never on a fixed time, and fails rather than hangs when it never does. The bound is in
 * time, not in turns: a condition that waits on a job worker's poll takes as long as the poll,
 * however few turns an idle event loop needs to get there (100,000 turns passed in 0.4 s).
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what = 'the condition',
): Promise<void> {
  const deadline = Date.now() + untilTimeoutMs;
  while (!(await condition())) {
    assert.ok(Date.now() < deadline, `${what} never held (waited ${untilTimeoutMs / 1000} s)`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
