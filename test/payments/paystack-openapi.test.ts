import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  type PaymentProvider,
  PaymentProviderError,
  type VerifiedTransaction,
} from '../../src/providers/payments/payment-provider.ts';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import type { SandboxTransaction } from '../../src/sandbox/payments/state.ts';
import { createWorld, type World } from '../helpers/world.ts';
import {
  checkout,
  paystackBaseUrl,
  type ReceivedWebhook,
  sandboxPayments,
  startWebhookReceiver,
  uniqueReference,
  uniqueTransferReference,
  type WebhookReceiver,
} from './helpers.ts';
import { describeErrors, type Exchange, loadSpec, type Spec } from './openapi.ts';

// The Paystack client and the sandbox provider against Paystack's own OpenAPI document: every call
// goes through a recording proxy, and each request body the client sent is validated against its
// operation's requestBody schema, each answer the sandbox gave against the operation's response schema
// for that status. The last tests break one field of a valid message to show the check can fail.

/** A message to break on purpose, field by field. */
// biome-ignore lint/suspicious/noExplicitAny: the tests below reach into messages of every shape
type Loose = any;

/**
 * Every status and every channel a sandbox transaction can have. The checks make this list break the
 * typecheck when SandboxTransaction gains one, so the list test below must then produce it too.
 */
const sandboxStatuses = {
  abandoned: true,
  failed: true,
  success: true,
} as const satisfies Record<SandboxTransaction['status'], true>;
const sandboxChannels = { card: true, dedicated_nuban: true } as const satisfies Record<
  SandboxTransaction['channel'],
  true
>;
/** The transactions the flows below leave behind, as `status/channel`: each pair the sandbox makes. */
const listedKinds = ['abandoned/card', 'failed/card', 'success/card', 'success/dedicated_nuban'];

/** What the flows below must have touched: operation (method and path template) → response schemas. */
const expectedCoverage: Record<string, string[]> = {
  'POST /transaction/initialize': ['TransactionInitializeResponse', 'TransactionInitializeBadRequestModel'],
  'GET /transaction/verify/{reference}': ['VerifyResponse', 'Error'],
  'GET /transaction': ['TransactionListResponse'],
  'GET /transaction/{id}': ['TransactionFetchResponse', 'Error'],
  'POST /customer': ['CustomerCreateResponse'],
  'POST /dedicated_account': ['DedicatedNubanCreateResponse'],
  'GET /bank/resolve': ['VerificationResolveAccountNumberResponse', 'Error'],
  'POST /transferrecipient': ['TransferRecipientCreateResponse'],
  'POST /transfer': ['TransferCreateResponse'],
  'GET /transfer/verify/{reference}': ['TransferVerifyResponse', 'Error'],
  'GET /balance': ['BalanceCheckResponse', 'Error'],
  'GET /bank': ['MiscellaneousListBanksResponse'],
};

describe("Paystack wire format against Paystack's OpenAPI document", () => {
  let spec: Spec;
  let world: World;
  let receiver: WebhookReceiver;
  let proxy: Server;
  let client: PaymentProvider;
  const exchanges: Exchange[] = [];
  const chargeWebhooks: ReceivedWebhook[] = [];
  /** Each kind of transaction (`status/channel`) as the client read it by fetch and by verify. */
  const readBoth: Array<{
    kind: string;
    fetched: VerifiedTransaction | null;
    verified: VerifiedTransaction | null;
  }> = [];
  /** What the unfiltered list (the daily reconciliation's call) gave, as `status/channel`. */
  let listedUnfiltered: string[] = [];

  before(async () => {
    spec = loadSpec();
    world = await createWorld();
    receiver = await startWebhookReceiver();
    const payments = sandboxPayments(world);
    payments.webhookUrlOverride = receiver.url;
    payments.transferSettleDelayMs = 0;
    payments.transferReversalDelayMs = 0;
    proxy = await startRecordingProxy(paystackBaseUrl(world), exchanges);
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const secretKey = world.ctx.config.secrets.paymentSigning;
    client = createPaystackClient({ baseUrl: proxyUrl, secretKey, timeoutMs: 5_000 });

    // Checkout: initialize (with every optional field the client sends), verify unpaid, pay, verify paid.
    const paid = uniqueReference();
    const started = await client.initializeTransaction({
      reference: paid,
      amountKobo: 250_000n,
      email: 'ada@example.com',
      callbackUrl: 'https://app.example.com/topup/done',
      metadata: { userId: 'u-1', purpose: 'topup' },
    });
    assert.equal((await client.verifyTransaction(paid))?.status, 'abandoned');
    await checkout(started.authorizationUrl, 'pay');
    assert.equal((await client.verifyTransaction(paid))?.status, 'success');
    // A declined one, a duplicate reference (400) and an unknown one (404).
    const declined = uniqueReference();
    await checkout(
      (
        await client.initializeTransaction({
          reference: declined,
          amountKobo: 10_000n,
          email: 'b@example.com',
        })
      ).authorizationUrl,
      'decline',
    );
    assert.equal((await client.verifyTransaction(declined))?.status, 'failed');
    await assert.rejects(
      client.initializeTransaction({ reference: paid, amountKobo: 250_000n, email: 'ada@example.com' }),
      (error: unknown) => error instanceof PaymentProviderError && error.definite,
    );
    assert.equal(await client.verifyTransaction('no-such-reference'), null);

    // A dedicated account and a transfer into it.
    const { customerCode } = await client.createCustomer({
      email: 'obi@example.com',
      firstName: 'Ada',
      lastName: 'Obi',
      phone: '08031234567',
    });
    const account = await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' });
    const transferIn = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber: account.accountNumber, amount: 5000 }),
    });
    const { data: inbound } = (await transferIn.json()) as { data: { reference: string } };
    assert.equal((await client.verifyTransaction(inbound.reference))?.channel, 'dedicated_nuban');
    // Reconciliation's scan for transfers into dedicated accounts.
    const listed = await client.listTransactions({
      from: new Date(Date.now() - 3_600_000),
      to: new Date(Date.now() + 3_600_000),
      status: 'success',
      channel: 'dedicated_nuban',
      page: 1,
      perPage: 50,
    });
    assert.equal(listed.pageCount, 1);
    assert.deepEqual(
      listed.transactions.map((t) => [t.reference, t.receiverAccountNumber, t.customerCode]),
      [[inbound.reference, account.accountNumber, customerCode]],
    );
    // Checkouts nobody finished (one with metadata, one without), then List Transactions as a
    // dashboard would call it: unfiltered, and filtered by each status and each channel.
    await client.initializeTransaction({
      reference: uniqueReference(),
      amountKobo: 30_000n,
      email: 'c@example.com',
    });
    await client.initializeTransaction({
      reference: uniqueReference(),
      amountKobo: 40_000n,
      email: 'c@example.com',
      metadata: { userId: 'u-3' },
    });
    const listVia = async (query: Record<string, string>) => {
      const response = await fetch(`${proxyUrl}/transaction?${new URLSearchParams(query)}`, {
        headers: { authorization: `Bearer ${secretKey}`, accept: 'application/json' },
      });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    };
    await listVia({});
    for (const status of Object.keys(sandboxStatuses)) await listVia({ status });
    for (const channel of Object.keys(sandboxChannels)) await listVia({ channel, per_page: '2' });
    // The daily reconciliation's call: no status, no channel. Then each kind fetched by its id (Fetch's
    // schema is stricter than verify's), and an id Paystack never gave (404).
    const everything = await client.listTransactions({
      from: new Date(Date.now() - 3_600_000),
      to: new Date(Date.now() + 3_600_000),
      page: 1,
      perPage: 50,
    });
    listedUnfiltered = everything.transactions.map((t) => `${t.status}/${t.channel}`);
    const oneOfEachKind = new Map(everything.transactions.map((t) => [`${t.status}/${t.channel}`, t]));
    for (const [kind, t] of oneOfEachKind) {
      readBoth.push({
        kind,
        fetched: await client.fetchTransaction(t.id),
        verified: await client.verifyTransaction(t.reference),
      });
    }
    assert.equal(await client.fetchTransaction(999_999_999), null);
    chargeWebhooks.push(
      ...(await receiver.waitFor(
        (w) => w.event === 'charge.success' && [paid, inbound.reference].includes(w.data.reference),
        2,
      )),
    );

    // Resolve (found and not found), recipients, transfers with each outcome, balance.
    assert.ok(await client.resolveAccount({ accountNumber: '0123456789', bankCode: '058' }));
    assert.equal(await client.resolveAccount({ accountNumber: '0000000000', bankCode: '058' }), null);
    for (const [last, event] of [
      ['0', 'transfer.success'],
      ['1', 'transfer.failed'],
      ['2', 'transfer.reversed'],
    ] as const) {
      const { recipientCode } = await client.createTransferRecipient({
        name: 'VTU Provider',
        accountNumber: `012345678${last}`,
        bankCode: '044',
      });
      const reference = uniqueTransferReference();
      await client.initiateTransfer({
        reference,
        amountKobo: 100_000n,
        recipientCode,
        reason: 'float top-up',
      });
      await receiver.waitFor((w) => w.event === event && w.data.reference === reference);
      assert.ok(await client.verifyTransfer(reference));
    }
    assert.equal(await client.verifyTransfer('no_such_transfer_reference'), null);
    await client.balance();
    // List Banks as the client reads it, by cursor over pages of 10, and whole as a dashboard asks.
    payments.bankPageSizeMax = 10;
    assert.ok((await client.listBanks()).length > 20);
    const banksVia = await fetch(`${proxyUrl}/bank?country=nigeria&currency=NGN`, {
      headers: { authorization: `Bearer ${secretKey}`, accept: 'application/json' },
    });
    assert.equal(banksVia.status, 200);
    await banksVia.arrayBuffer();
    // A wrong secret key: 401.
    const stranger = createPaystackClient({
      baseUrl: proxyUrl,
      secretKey: 'sk_test_wrong',
      timeoutMs: 5_000,
    });
    await assert.rejects(
      stranger.balance(),
      (e: unknown) => e instanceof PaymentProviderError && e.httpStatus === 401,
    );
  });

  after(async () => {
    proxy?.closeAllConnections();
    await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
    await receiver?.close();
    await world?.close();
  });

  it('sent every request to an operation of the document, and got only documented statuses', () => {
    for (const exchange of exchanges) {
      const found = spec.operationFor(exchange.method, exchange.path);
      assert.ok(found, `${exchange.method} ${exchange.path} is no operation of the document`);
      assert.ok(
        spec.responseValidator(exchange.method, found.template, exchange.status),
        `${exchange.method} ${found.template} answered ${exchange.status}, which the document does not describe`,
      );
    }
  });

  it('sent only query parameters the operation declares, each of its declared type', () => {
    const failures: string[] = [];
    let checked = 0;
    for (const exchange of exchanges) {
      if (Object.keys(exchange.query).length === 0) continue;
      const { template, operation } = spec.operationFor(exchange.method, exchange.path)!;
      for (const problem of spec.queryProblems(operation, exchange.query)) {
        failures.push(`${exchange.method} ${template}: ${problem}`);
      }
      checked += 1;
    }
    assert.deepEqual(failures, []);
    assert.ok(checked >= 5, `only ${checked} queries checked`);
    // The check can fail: an undeclared parameter, and a value of the wrong type.
    const banks = spec.operationFor('GET', '/bank')!.operation;
    assert.equal(spec.queryProblems(banks, { per_page: '10' }).length, 1);
    assert.equal(spec.queryProblems(banks, { use_cursor: 'yes' }).length, 1);
    assert.equal(spec.queryProblems(banks, { country: 'france' }).length, 1);
  });

  it('lists banks page by page, each page and bank as MiscellaneousListBanksResponse wants', () => {
    const pages = exchanges.filter((e) => e.path === '/bank' && e.query.use_cursor === 'true');
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    // Every page but the last names the next; the client sent each cursor back.
    const nexts = pages.map((e) => (e.responseBody as { meta: { next: string | null } }).meta.next);
    assert.equal(nexts.at(-1), null);
    assert.deepEqual(
      pages.slice(1).map((e) => e.query.next),
      nexts.slice(0, -1),
    );
    const item = spec.validatorAt('/components/schemas/MiscellaneousListBanksResponseArray');
    const listed = pages.flatMap((e) => (e.responseBody as { data: Loose[] }).data);
    assert.deepEqual(
      listed.filter((b) => !item(b)).map((b) => `${b.code}: ${describeErrors(item.errors)}`),
      [],
    );
    const broken: Loose = structuredClone(listed[0]);
    delete broken.is_deleted;
    assert.equal(item(broken), false, 'is_deleted is required');
    assert.equal(item({ ...listed[0], active: 'true' }), false);
  });

  it('validates every request body the client sent, which names only fields the schema declares', () => {
    let checked = 0;
    for (const exchange of exchanges) {
      const { template } = spec.operationFor(exchange.method, exchange.path)!;
      const request = spec.requestValidator(exchange.method, template);
      if (exchange.method === 'GET') {
        assert.equal(exchange.requestBody, undefined);
        continue;
      }
      assert.ok(request, `${exchange.method} ${template} has no JSON request schema`);
      assert.ok(
        request.validate(exchange.requestBody),
        `${exchange.method} ${template} request (${request.schemaName}): ${describeErrors(request.validate.errors)}`,
      );
      const pointer = `/paths/${template.replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
      const declared = spec.declaredProperties(pointer);
      for (const field of Object.keys(exchange.requestBody as object)) {
        assert.ok(
          declared.has(field),
          `${template}: the client sent "${field}", which ${request.schemaName} does not declare`,
        );
      }
      checked += 1;
    }
    assert.ok(checked >= 8, `only ${checked} request bodies checked`);
  });

  it('validates every answer of the sandbox against the response schema for its status', () => {
    const failures: string[] = [];
    for (const exchange of exchanges) {
      const { template } = spec.operationFor(exchange.method, exchange.path)!;
      const response = spec.responseValidator(exchange.method, template, exchange.status)!;
      if (!response.validate(exchange.responseBody)) {
        failures.push(
          `${exchange.method} ${exchange.path} ${exchange.status} (${response.schemaName}): ${describeErrors(response.validate.errors)}`,
        );
      }
    }
    assert.deepEqual(failures, []);
  });

  it('covered every operation the client uses, with the response schemas expected', () => {
    const seen: Record<string, Set<string>> = {};
    for (const exchange of exchanges) {
      const { template } = spec.operationFor(exchange.method, exchange.path)!;
      const key = `${exchange.method} ${template}`;
      seen[key] ??= new Set();
      seen[key].add(spec.responseValidator(exchange.method, template, exchange.status)!.schemaName);
    }
    assert.deepEqual(
      Object.fromEntries(Object.entries(seen).map(([k, v]) => [k, [...v].sort()])),
      Object.fromEntries(Object.entries(expectedCoverage).map(([k, v]) => [k, [...v].sort()])),
    );
  });

  it('lists transactions of every status and channel, each item as TransactionListResponseArray wants', () => {
    const item = spec.validatorAt('/components/schemas/TransactionListResponseArray');
    // Each transaction once (the lists overlap), as its last answer showed it.
    const byReference = new Map<string, Loose>();
    for (const exchange of exchanges) {
      if (exchange.method !== 'GET' || exchange.path !== '/transaction' || exchange.status !== 200) continue;
      for (const t of (exchange.responseBody as { data: Loose[] }).data) byReference.set(t.reference, t);
    }
    const listed = [...byReference.values()];
    const failures: string[] = [];
    for (const t of listed) {
      if (!item(t)) failures.push(`${t.status}/${t.channel} ${t.reference}: ${describeErrors(item.errors)}`);
    }
    assert.deepEqual(failures, []);
    const kinds = new Set(listed.map((t) => `${t.status}/${t.channel}`));
    assert.deepEqual([...kinds].sort(), listedKinds);
    for (const status of Object.keys(sandboxStatuses)) assert.ok(listed.some((t) => t.status === status));
    for (const channel of Object.keys(sandboxChannels)) assert.ok(listed.some((t) => t.channel === channel));

    // Beyond the schema, what Paystack sends: no payment time before a payment, metadata as given or
    // null, and an unpaid checkout's authorization with every field present and empty.
    for (const t of listed) {
      const paid = t.status === 'success';
      assert.equal(t.paid_at === null, !paid, `${t.reference}: paid_at ${t.paid_at}`);
      if (paid) assert.equal(t.paidAt, t.paid_at);
      assert.ok(
        t.metadata === null || typeof t.metadata === 'object',
        `${t.reference}: metadata ${t.metadata}`,
      );
      if (t.status === 'abandoned') {
        assert.equal(t.authorization.authorization_code, null);
        assert.equal(t.authorization.reusable, false);
      } else {
        assert.match(t.authorization.authorization_code, /^AUTH_/);
      }
    }
    const metadata = new Set(
      listed.filter((t) => t.status === 'abandoned').map((t) => JSON.stringify(t.metadata)),
    );
    assert.deepEqual([...metadata].sort(), ['null', '{"userId":"u-3"}']);
  });

  it('lists every status and channel when asked for none, as the daily reconciliation asks', () => {
    assert.deepEqual([...new Set(listedUnfiltered)].sort(), listedKinds);
    const unfiltered = exchanges.filter(
      (e) => e.path === '/transaction' && e.query.from !== undefined && e.query.status === undefined,
    );
    assert.equal(unfiltered.length, 1);
    assert.deepEqual(Object.keys(unfiltered[0]!.query).sort(), ['from', 'page', 'per_page', 'to']);
  });

  it('fetches each kind by id as TransactionFetchResponse wants, read as verify reads it', () => {
    assert.deepEqual(readBoth.map((r) => r.kind).sort(), listedKinds);
    for (const { kind, fetched, verified } of readBoth) {
      assert.ok(fetched, kind);
      assert.deepEqual(fetched, verified, kind);
    }
    const fetches = exchanges.filter((e) => /^\/transaction\/\d+$/.test(e.path));
    assert.deepEqual(fetches.map((e) => e.status).sort(), [200, 200, 200, 200, 404]);
    // What Fetch's schema insists on, which verify's answer does not have: a paid_at string before
    // payment, metadata with custom_fields, and an authorization with every field.
    const schema = spec.responseValidator('GET', '/transaction/{id}', 200)!.validate;
    const unpaid = fetches.find((e) => (e.responseBody as Loose).data?.status === 'abandoned')!.responseBody;
    assert.ok(schema(unpaid), describeErrors(schema.errors));
    const breakages: Array<[string, (body: Loose) => void]> = [
      [
        'paid_at null',
        (b) => {
          b.data.paid_at = null;
        },
      ],
      [
        'metadata as an empty string',
        (b) => {
          b.data.metadata = '';
        },
      ],
      ['metadata without custom_fields', (b) => delete b.data.metadata.custom_fields],
      [
        'authorization empty',
        (b) => {
          b.data.authorization = {};
        },
      ],
      [
        'customer phone null',
        (b) => {
          b.data.customer.phone = null;
        },
      ],
    ];
    for (const [label, breakIt] of breakages) {
      const broken = structuredClone(unpaid) as Loose;
      breakIt(broken);
      assert.equal(schema(broken), false, `${label} should fail TransactionFetchResponse`);
    }
  });

  it('sends charge.success with the transaction object of verify (card and dedicated account)', () => {
    const data = spec.validatorAt('/components/schemas/VerifyResponse/properties/data');
    assert.deepEqual(chargeWebhooks.map((w) => w.data.channel).sort(), ['card', 'dedicated_nuban']);
    for (const webhook of chargeWebhooks) {
      assert.ok(data(webhook.data), `${webhook.data.channel}: ${describeErrors(data.errors)}`);
    }
  });

  it('fails a sandbox answer with one field broken', () => {
    const verified = exchanges.find((e) => e.path.startsWith('/transaction/verify/') && e.status === 200)!;
    const schema = spec.responseValidator('GET', '/transaction/verify/{reference}', 200)!.validate;
    assert.ok(schema(verified.responseBody));
    const breakages: Array<[string, (body: Loose) => void]> = [
      [
        'amount as a string',
        (b) => {
          b.data.amount = '250000';
        },
      ],
      [
        'amount with a fraction',
        (b) => {
          b.data.amount = 2500.5;
        },
      ],
      ['no customer code', (b) => delete b.data.customer.customer_code],
      ['paid_at missing', (b) => delete b.data.paid_at],
      [
        'metadata as a number',
        (b) => {
          b.data.metadata = 7;
        },
      ],
      ['no envelope status', (b) => delete b.status],
    ];
    for (const [label, breakIt] of breakages) {
      const broken = structuredClone(verified.responseBody);
      breakIt(broken);
      assert.equal(schema(broken), false, `${label} should fail VerifyResponse`);
    }

    const listItem = spec.validatorAt('/components/schemas/TransactionListResponseArray');
    const listedPaid = exchanges
      .filter((e) => e.path === '/transaction' && e.status === 200)
      .flatMap((e) => (e.responseBody as { data: Loose[] }).data)
      .find((t) => t.status === 'success' && t.channel === 'card');
    assert.ok(listItem(listedPaid));
    const itemBreakages: Array<[string, (item: Loose) => void]> = [
      [
        'metadata as an empty string',
        (t) => {
          t.metadata = '';
        },
      ],
      [
        'paidAt null',
        (t) => {
          t.paidAt = null;
        },
      ],
      [
        'authorization empty',
        (t) => {
          t.authorization = {};
        },
      ],
    ];
    for (const [label, breakIt] of itemBreakages) {
      const broken: Loose = structuredClone(listedPaid);
      breakIt(broken);
      assert.equal(listItem(broken), false, `${label} should fail TransactionListResponseArray`);
    }

    const balance = spec.responseValidator('GET', '/balance', 200)!.validate;
    assert.equal(
      balance({ status: true, message: 'ok', data: [{ currency: 'NGN', balance: '100' }] }),
      false,
    );
    const dedicated = spec.responseValidator('POST', '/dedicated_account', 200)!.validate;
    const created = exchanges.find((e) => e.path === '/dedicated_account')!.responseBody as Loose;
    assert.ok(dedicated(created));
    const noBank: Loose = structuredClone(created);
    delete noBank.data.bank.slug;
    assert.equal(dedicated(noBank), false);
  });

  it('fails a client request with one field broken', () => {
    const initialize = spec.requestValidator('POST', '/transaction/initialize')!.validate;
    const sent = exchanges.find((e) => e.path === '/transaction/initialize')!.requestBody as Record<
      string,
      unknown
    >;
    assert.ok(initialize(sent));
    assert.equal(initialize({ ...sent, amount: '250000' }), false);
    assert.equal(initialize({ ...sent, email: undefined }), false);
    assert.equal(initialize({ ...sent, currency: 'XYZ' }), false);

    const transfer = spec.requestValidator('POST', '/transfer')!.validate;
    const initiated = exchanges.find((e) => e.path === '/transfer')!.requestBody as Record<string, unknown>;
    assert.ok(transfer(initiated));
    const { source: _source, ...withoutSource } = initiated;
    assert.equal(transfer(withoutSource), false);
    assert.equal(transfer({ ...initiated, amount: 1000.5 }), false);
  });
});

/** A proxy that forwards to `target` and records each request and answer. */
async function startRecordingProxy(target: string, exchanges: Exchange[]): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type', 'accept']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const upstream = await fetch(`${target}${request.url}`, {
        method: request.method ?? 'GET',
        headers,
        ...(raw !== '' ? { body: raw } : {}),
      });
      const text = await upstream.text();
      const url = new URL(request.url ?? '', 'http://proxy.invalid');
      exchanges.push({
        method: request.method ?? 'GET',
        path: url.pathname,
        requestBody: raw === '' ? undefined : JSON.parse(raw),
        query: Object.fromEntries(url.searchParams),
        status: upstream.status,
        responseBody: JSON.parse(text),
      });
      response.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      });
      response.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
