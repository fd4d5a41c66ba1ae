import { createHmac } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import { type SandboxPaymentsState, type SandboxWebhookDelivery, webhookDeliveriesMax } from './state.ts';

// Webhook delivery as the payment provider does it: a POST of `{event, data}` signed with the secret
// key, header `x-payment-signature` = lowercase hex HMAC-SHA-512 of the exact body bytes (our spec's
// name for Paystack's x-paystack-signature). Anything but a 2xx, a network error or a timeout is
// retried after state.webhookRetryDelaysMs (1 s, 2 s, 4 s, ... by default; Paystack's own schedule
// is minutes to hours), each attempt bounded by state.webhookAttemptTimeoutMs. While the webhook mode
// is "drop" nothing is sent: reconciliation has to find the payment through verify.

export const signatureHeader = 'x-payment-signature';

/** Timers that all stop when the sandbox closes, so that no retry outlives its app. */
export type Timers = {
  readonly closed: boolean;
  after(delayMs: number, run: () => void): void;
  /** Runs when the sandbox closes (abort in-flight requests, settle waiting promises). */
  onClose(run: () => void): () => void;
  close(): void;
};

export function createTimers(): Timers {
  const pending = new Set<NodeJS.Timeout>();
  const closers = new Set<() => void>();
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    after(delayMs, run) {
      if (closed) return;
      const timer = setTimeout(() => {
        pending.delete(timer);
        run();
      }, delayMs);
      // A pending retry alone does not keep the process alive.
      timer.unref();
      pending.add(timer);
    },
    onClose(run) {
      closers.add(run);
      return () => closers.delete(run);
    },
    close() {
      closed = true;
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
      for (const run of closers) run();
      closers.clear();
    },
  };
}

export type WebhookSender = {
  /** Starts delivering the event (or records it as dropped) and returns its delivery record. */
  send(event: string, reference: string, data: unknown): SandboxWebhookDelivery;
};

export type WebhookSenderOptions = {
  state: SandboxPaymentsState;
  signingSecret: string;
  webhookUrl: string;
  clock: Clock;
  timers: Timers;
};

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const ids = { last: 0 };
  return { send: (event, reference, data) => send(options, ++ids.last, { event, reference, data }) };
}

/** One delivery under way: what is sent where, on which schedule, and how it ends. */
type Delivery = {
  record: SandboxWebhookDelivery;
  url: string;
  body: Buffer;
  signature: string;
  retryDelaysMs: readonly number[];
  attemptTimeoutMs: number;
  end(status: SandboxWebhookDelivery['status']): void;
  /** Stops the close of the sandbox from ending the delivery (it has ended already). */
  stopOnClose(): void;
};

function send(
  options: WebhookSenderOptions,
  id: number,
  event: { event: string; reference: string; data: unknown },
): SandboxWebhookDelivery {
  const { state, timers } = options;
  let settle!: () => void;
  const record: SandboxWebhookDelivery = {
    id,
    event: event.event,
    reference: event.reference,
    url: state.webhookUrlOverride ?? options.webhookUrl,
    status: 'delivering',
    attempts: [],
    settled: new Promise<void>((resolve) => {
      settle = resolve;
    }),
  };
  state.webhookDeliveries.push(record);
  if (state.webhookDeliveries.length > webhookDeliveriesMax) state.webhookDeliveries.shift();
  const end = (status: SandboxWebhookDelivery['status']) => {
    record.status = status;
    settle();
  };
  if (state.webhookMode === 'drop') {
    end('dropped');
    return record;
  }
  const body = Buffer.from(JSON.stringify({ event: event.event, data: event.data }), 'utf8');
  const delivery: Delivery = {
    record,
    url: record.url,
    body,
    signature: createHmac('sha512', options.signingSecret).update(body).digest('hex'),
    // The schedule in force when the event happened, even if a test changes it meanwhile.
    retryDelaysMs: [...state.webhookRetryDelaysMs],
    attemptTimeoutMs: state.webhookAttemptTimeoutMs,
    end,
    stopOnClose: timers.onClose(() => end('stopped')),
  };
  void attempt(options, delivery, 1);
  return record;
}

/** One POST of the delivery; a failure is tried again after its delay, until the schedule runs out. */
async function attempt(options: WebhookSenderOptions, delivery: Delivery, number: number): Promise<void> {
  const { timers } = options;
  const controller = new AbortController();
  const stopRequest = timers.onClose(() => controller.abort());
  const at = options.clock.now().toISOString();
  try {
    const response = await fetch(delivery.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [signatureHeader]: delivery.signature },
      body: delivery.body,
      redirect: 'manual',
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(delivery.attemptTimeoutMs)]),
    });
    await response.arrayBuffer();
    delivery.record.attempts.push({ at, httpStatus: response.status, error: null });
    if (response.status >= 200 && response.status < 300) {
      delivery.stopOnClose();
      delivery.end('delivered');
      return;
    }
  } catch (error) {
    delivery.record.attempts.push({
      at,
      httpStatus: null,
      error: describe(error, delivery.attemptTimeoutMs),
    });
  } finally {
    stopRequest();
  }
  if (timers.closed) return;
  const delayMs = delivery.retryDelaysMs[number - 1];
  if (delayMs === undefined) {
    delivery.stopOnClose();
    delivery.end('failed');
    return;
  }
  timers.after(delayMs, () => void attempt(options, delivery, number + 1));
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError')
    return `no answer within ${timeoutMs} ms`;
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`;
}
