import { call, must, sandboxPost } from './client.ts';
import { count } from './model.ts';
import type { Soak } from './soak-context.ts';
import { verifyCheckouts } from './topups.ts';

// After the driving time: bring the run to rest. The sandbox clock moves past the requery horizon
// in steps (each move runs what fell due), requests whose answer never came are sent again with
// their own Idempotency-Key (by then their key is stale if the process that held it died), the
// people who paid at the checkout look at their top-up as the return page does, the admin asks for
// a reconciliation, and the soak polls until no purchase is processing.

const STEP_SECONDS = 300;
/** Past the last requery delay that a purchase can still be waiting for (settlement.ts) and the 15-minute not-found rule. */
const HORIZON_SECONDS = 2 * 60 * 60;
const SETTLE_DEADLINE_MS = 180_000;
/**
 * How long a send to a provider can still be on its way when the driving stops: the service's
 * VTU_TIMEOUT_MS (20 s by default, which the soak keeps) and a second more. The quiet waits this
 * long in real time before moving the clock. The requery no longer fails a purchase on "not found"
 * at its first requery, nor a send timeout (of the clock) after its previous one (decision 0055),
 * which covers one move of the clock past a send in flight; the quiet moves it twice within seconds
 * (an hour, the reconciliation, an hour), which the service's clock never does outside the sandbox.
 */
const SENDS_IN_FLIGHT_MS = 21_000;

export type Quiet = {
  clockMovedSeconds: number;
  unresolvedAfter: string[];
  processingLeft: number;
  settleMs: number;
};

async function moveClock(soak: Soak, seconds: number): Promise<number> {
  let moved = 0;
  for (; moved < seconds; moved += STEP_SECONDS) {
    const answer = await sandboxPost(soak.client, '/__sandbox/clock', { advanceSeconds: STEP_SECONDS });
    if (answer.status !== 200)
      throw new Error(`moving the sandbox clock answered ${answer.status}: ${JSON.stringify(answer.data)}`);
  }
  return moved;
}

/** Purchases still processing, over every person, as each sees them. */
export async function processingCount(soak: Soak): Promise<number> {
  let total = 0;
  for (const person of soak.model.people) {
    const list = await must<{ total: number }>(
      call(
        soak.client,
        'listMyVtuTransactions',
        { status: 'processing', limit: 1 },
        { session: person.session, method: 'GET' },
      ),
      'listMyVtuTransactions',
    );
    total += list.total;
  }
  return total;
}

export async function quieten(soak: Soak): Promise<Quiet> {
  const begun = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SENDS_IN_FLIGHT_MS));
  let moved = await moveClock(soak, HORIZON_SECONDS / 2);
  const unresolvedAfter: string[] = [];
  for (const pending of soak.model.unresolved) {
    const resolved = await pending.retry();
    count(soak.model, 'answer lost, sent again after the quiet', resolved ? 'answered' : 'still no answer');
    if (!resolved) unresolvedAfter.push(pending.what);
  }
  await verifyCheckouts(soak);
  await must(call(soak.client, 'adminReconcile', {}, { session: soak.admin }), 'adminReconcile');
  moved += await moveClock(soak, HORIZON_SECONDS / 2);
  let processingLeft = await processingCount(soak);
  const deadline = performance.now() + SETTLE_DEADLINE_MS;
  while (processingLeft > 0 && performance.now() < deadline) {
    moved += await moveClock(soak, STEP_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    processingLeft = await processingCount(soak);
  }
  return {
    clockMovedSeconds: moved,
    unresolvedAfter,
    processingLeft,
    settleMs: Math.round(performance.now() - begun),
  };
}
