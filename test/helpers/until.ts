import assert from 'node:assert/strict';

/**
 * Yields to the event loop until the condition holds: waits on the state an in-process server
 * changes, never on time, and fails rather than hangs when it never does.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what = 'the condition',
): Promise<void> {
  for (let turn = 0; !(await condition()); turn++) {
    assert.ok(turn < 100_000, `${what} never held`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
