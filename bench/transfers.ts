import { randomInt, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import {
  balanceNaira,
  type Check,
  CONNECTIONS,
  eventually,
  fromAutocannon,
  fundWallet,
  getOperation,
  loadSeconds,
  mapConcurrent,
  measured,
  nextPhone,
  postOperation,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  signIn,
} from './common.ts';

// transferToUser under load (wallet-to-wallet transfers, issue 19): SENDERS users brought to KYC
// Tier 2 through the API as a client would (profile name, Tier 1 liveness, Tier 2 with a NIN the
// sandbox resolves to that name), each with a PIN and a wallet funded by a signed charge.success,
// send ₦TRANSFER_NAIRA to RECIPIENTS Tier-1 users, at 50 connections, each request with its own
// Idempotency-Key. The sender changes on every request (round-robin) and the recipient with it,
// shifted by one each round, so the pairs vary and requests in flight at once rarely share a wallet:
// a transfer locks both. No sender can reach its daily total or run short during a run.
//
// Afterwards every accepted transfer must have moved exactly once: the recipients' wallet histories
// (transfer credits only) count the transfers recorded, between the answers accepted and those plus
// the requests in flight when the load stopped; the senders' histories count them again (their one
// funding credit apart); the recipients hold recorded × ₦TRANSFER_NAIRA, the senders what was funded
// less that; and adminLedgerCheck is ok. Any answer but 200 (a 5xx from a deadlock, a refusal)
// fails the run.
//
// BENCH_TRANSFER_SENDERS (200) and BENCH_TRANSFER_RECIPIENTS (200) set the users.

const SENDERS = Number(process.env.BENCH_TRANSFER_SENDERS ?? 200);
const RECIPIENTS = Number(process.env.BENCH_TRANSFER_RECIPIENTS ?? 200);
const PIN = '2580';
const FUND_NAIRA = 100_000;
/** The least a transfer may move. */
const TRANSFER_NAIRA = 100;
const DURATION_SECONDS = loadSeconds(10);
/** Funding events of these senders carry event ids from here (buyers' 1,000,000, savers' 2,000,000). */
const FUNDING_SEQUENCE_FROM = 3_000_000;

export const transferSettings = {
  senders: SENDERS,
  recipients: RECIPIENTS,
  fundNaira: FUND_NAIRA,
  transferNaira: TRANSFER_NAIRA,
  durationSeconds: DURATION_SECONDS,
};

/** An 11-digit NIN the sandbox resolves to the caller's own name (not starting with 9, not all zeros). */
const matchingNin = (): string => `1${String(randomInt(0, 10_000_000_000)).padStart(10, '0')}`;

type Member = { phone: string; token: string };

async function recipient(server: Server): Promise<Member> {
  const phone = nextPhone();
  const token = await signIn(server.baseUrl, phone);
  await postOperation(server.baseUrl, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, token);
  return { phone, token };
}

async function sender(server: Server, sequence: number): Promise<Member> {
  const { phone, token } = await recipient(server);
  await postOperation(server.baseUrl, 'updateProfile', { firstName: 'Chidi', lastName: 'Okafor' }, token);
  // Tier 2 needs the Tier 1 above (recipient() made it) and a profile name the NIN resolves to.
  const tier2 = await postOperation(server.baseUrl, 'submitKycTier2', { nin: matchingNin(), phone }, token);
  const status = (tier2.data as { status: string }).status;
  if (status !== 'approved') throw new Error(`submitKycTier2 answered ${status}: ${JSON.stringify(tier2)}`);
  await postOperation(server.baseUrl, 'setTransactionPin', { pin: PIN }, token);
  await fundWallet(server.baseUrl, token, FUND_NAIRA, sequence);
  return { phone, token };
}

/** How many entries a user's wallet history has (GET listTransactions, its total). */
async function historyLength(server: Server, token: string): Promise<number> {
  return ((await getOperation(server.baseUrl, 'listTransactions?limit=1', token)).data as { total: number })
    .total;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export async function transferToUserScenario(
  server: Server,
  database: string,
  adminToken: string,
): Promise<{ result: ScenarioResult; checks: Check[] }> {
  const setupStartedAt = performance.now();
  const senders = await mapConcurrent(
    Array.from({ length: SENDERS }, (_, i) => i),
    SETUP_CONCURRENCY,
    (i) => sender(server, FUNDING_SEQUENCE_FROM + i),
  );
  const recipients = await mapConcurrent(
    Array.from({ length: RECIPIENTS }, (_, i) => i),
    SETUP_CONCURRENCY,
    () => recipient(server),
  );
  const balances = (members: Member[]) =>
    mapConcurrent(members, SETUP_CONCURRENCY, (m) => balanceNaira(server.baseUrl, m.token));
  await eventually('the senders’ wallets funded', async () =>
    (await balances(senders)).every((b) => b >= FUND_NAIRA),
  );
  process.stdout.write(
    `${database}: transferToUser: ${SENDERS} Tier-2 senders and ${RECIPIENTS} Tier-1 recipients ready in ${Math.round((performance.now() - setupStartedAt) / 1000)} s\n`,
  );

  let sent = 0;
  /** The first answers other than 200, as the service gave them (a 5xx would be a deadlock's). */
  const refusals: string[] = [];
  const { value, usage } = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/transferToUser',
          // Another sender on every request; the recipient moves on with it, shifted each round.
          setupRequest: (request) => {
            const n = sent++;
            const from = senders[n % SENDERS] as Member;
            const to = recipients[(n + Math.floor(n / SENDERS)) % RECIPIENTS] as Member;
            return {
              ...request,
              headers: {
                'content-type': 'application/json',
                authorization: `Bearer ${from.token}`,
                'idempotency-key': randomUUID(),
              },
              body: JSON.stringify({ data: { phone: to.phone, amount: TRANSFER_NAIRA, pin: PIN } }),
            };
          },
          onResponse: (status, body) => {
            if (status !== 200 && refusals.length < 5) refusals.push(`${status} ${body.slice(0, 300)}`);
          },
        },
      ],
    }),
  );
  const result = fromAutocannon(
    database,
    'transferToUser',
    `POST, ₦${TRANSFER_NAIRA}, ${SENDERS} Tier-2 senders round-robin → ${RECIPIENTS} Tier-1 recipients, ${CONNECTIONS} conns, ${DURATION_SECONDS}s`,
    value,
    usage,
  );

  const checks: Check[] = [];
  const accepted = value['2xx'];
  const statuses = Object.entries(value.statusCodeStats)
    .map(([status, { count }]) => `${count} × ${status}`)
    .join(', ');
  checks.push({
    name: 'every transfer answered 200',
    ok: value.non2xx === 0 && value.errors === 0 && value.timeouts === 0,
    detail: `${statuses}; ${value.errors} errors, ${value.timeouts} timeouts${refusals.length > 0 ? `; first: ${refusals.join(' | ')}` : ''}`,
  });

  // Requests in flight when the load generator stopped still finish on the service (within their
  // timeout): the figures are read once the transfers recorded stop changing around the balances' read.
  const received = async () =>
    sum(await mapConcurrent(recipients, SETUP_CONCURRENCY, (m) => historyLength(server, m.token)));
  let recorded = 0;
  let toRecipients = 0;
  let toSenders = 0;
  await eventually(
    'the transfers in flight finished',
    async () => {
      const before = await received();
      toRecipients = sum(await balances(recipients));
      toSenders = sum(await balances(senders));
      recorded = await received();
      return before === recorded;
    },
    () => '',
    (REQUEST_TIMEOUT_SECONDS + 5) * 1000,
  ).catch(() => false);
  const sentRecorded =
    sum(await mapConcurrent(senders, SETUP_CONCURRENCY, (m) => historyLength(server, m.token))) - SENDERS;
  checks.push({
    name: 'every accepted transfer recorded once, in both histories',
    ok: recorded >= accepted && recorded <= accepted + CONNECTIONS && sentRecorded === recorded,
    detail: `${accepted} accepted (2xx); ${recorded} credits in the recipients' histories, ${sentRecorded} debits in the senders'`,
  });
  const expectedToRecipients = recorded * TRANSFER_NAIRA;
  const expectedToSenders = SENDERS * FUND_NAIRA - recorded * TRANSFER_NAIRA;
  checks.push({
    name: 'each transfer moved its amount exactly once',
    ok: toRecipients === expectedToRecipients && toSenders === expectedToSenders,
    detail: `recipients hold ₦${toRecipients} (expected ₦${expectedToRecipients}), senders ₦${toSenders} (expected ₦${expectedToSenders})`,
  });
  const ledger = (await getOperation(server.baseUrl, 'adminLedgerCheck', adminToken)).data as {
    ok: boolean;
    entries: number;
    imbalances: unknown[];
  };
  checks.push({
    name: 'adminLedgerCheck after transfers',
    ok: ledger.ok,
    detail: `ok ${ledger.ok}, ${ledger.entries} entries, ${ledger.imbalances.length} imbalances`,
  });
  return { result, checks };
}
