// What the webhook scenario reads straight from the service's database: its own payment_events and
// how they were closed. Scoped to the scenario's references (its top-up intents, and its unknown
// references by their prefix) because the bench runs scenarios one after another on one database:
// the webClient scenario, which runs first, funds its buyer's wallet through a charge.success of its
// own, and a count over the whole table read that credit as one of this scenario's ("501 credited
// of 500 top-ups", issue 29) although every wallet held exactly what it was paid.

/** Runs a parameterised statement: a pg.Client's query, or anything shaped like it. */
export type Query = (text: string, values: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

export type WebhookScenarioScope = {
  /** Every unknown reference of the scenario (the probe's too) starts with it. */
  unknownPrefix: string;
  /** The top-up intents' references the scenario delivered bodies for. */
  topupReferences: string[];
};

export type WebhookEventCounts = {
  /** Rows of the scenario: one per distinct body stored. */
  stored: number;
  unprocessed: number;
  unknown: number;
  /** Events closed as `credited`: one per top-up, since a second event of a reference is `already_credited`. */
  credited: number;
  /** Distinct top-up references among them: fewer than `credited` means a reference was labelled twice. */
  creditedReferences: number;
};

/** LIKE's own wildcards in the prefix stand for themselves. */
const likePrefix = (prefix: string): string => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function countWebhookScenarioEvents(
  query: Query,
  scope: WebhookScenarioScope,
): Promise<WebhookEventCounts> {
  const { rows } = await query(
    `select count(*) as stored,
            count(*) filter (where processed_at is null) as unprocessed,
            count(*) filter (where reference like $1) as unknown,
            count(*) filter (where outcome = 'credited') as credited,
            count(distinct reference) filter (where outcome = 'credited') as "creditedReferences"
       from payment_events
      where reference like $1 or reference = any($2::text[])`,
    [likePrefix(scope.unknownPrefix), scope.topupReferences],
  );
  const row = rows[0] as Record<keyof WebhookEventCounts, string | number | bigint> | undefined;
  if (row === undefined) throw new Error('counting payment_events returned no row');
  return {
    stored: Number(row.stored),
    unprocessed: Number(row.unprocessed),
    unknown: Number(row.unknown),
    credited: Number(row.credited),
    creditedReferences: Number(row.creditedReferences),
  };
}

/** The scenario's events are all processed, and each top-up credited by exactly one of them. */
export const eachTopupCreditedOnce = (counts: WebhookEventCounts, topups: number): boolean =>
  counts.unprocessed === 0 && counts.credited === topups && counts.creditedReferences === topups;
