import type { ColumnType, Generated } from 'kysely';

// Kysely's view of the tables. Each domain reads and writes only its own tables (see DESIGN.md).

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json = ColumnType<unknown, string, string>;

export type UsersTable = {
  id: string;
  phone: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  referral_code: string;
  referred_by_code: string | null;
  kyc_tier: Generated<number>;
  pin_hash: string | null;
  pin_failed_count: Generated<number>;
  pin_locked_until: Timestamp | null;
  /** Set when the current email was verified by its code; null for none or an unverified one. */
  email_verified_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Set when Tier 2 was approved: first_name and last_name are then the verified names, for good. */
  name_verified_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The price level whose markups the user pays (catalogue's vtu_markups.level); null: the default. */
  price_level: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set while an operator has frozen the account (API.md 17.4): no money leaves it at its request. */
  frozen_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** The operator's reason for the freeze (never shown to the person); set exactly with frozen_at. */
  frozen_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** The operator (a user id) who froze the account; set exactly with frozen_at. */
  frozen_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when the account closed (decision 0047): its phone, names and email are then a pseudonym. */
  closed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The person switched the USSD channel on (setUssdEnabled, API.md 17.6); off by default. */
  ussd_enabled: Generated<boolean>;
};

export type OtpCodesTable = {
  phone: string;
  code_hash: string;
  expires_at: Timestamp;
  attempts: Generated<number>;
  sent_at: Timestamp;
  /** Start of the rolling 24 h window in which day_requests codes were sent to this phone. */
  day_started_at: Timestamp;
  day_requests: Generated<number>;
};

export type SessionsTable = {
  id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
  /** Until when the session's admin second factor (TOTP) holds; null: never verified (decision 0039). */
  second_factor_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
};

/** An administrator's TOTP: the secret sealed under ADMIN_TOTP_KEY, the wrong codes counted (decision 0039). */
export type AdminTotpTable = {
  user_id: string;
  secret_sealed: string;
  confirmed_at: Timestamp | null;
  failed_count: Generated<number>;
  locked_until: Timestamp | null;
  /** The RFC 6238 time step of the last code accepted: no code of it or before is accepted again. */
  last_used_step: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

/** Every admin operation, allowed or refused; append-only (a trigger refuses UPDATE, DELETE, TRUNCATE). */
export type AuditLogTable = {
  id: string;
  created_at: Timestamp;
  admin_id: string;
  operation: string;
  /** The input as validated or sent, credentials redacted; null when it was never read. */
  input: ColumnType<unknown, string | null, never>;
  /** `ok`, `replayed`, or the error code of the refusal. */
  outcome: string;
  ip: string;
};

export type AccessTokensTable = {
  token_hash: string;
  session_id: string;
  expires_at: Timestamp;
};

export type RefreshTokensTable = {
  token_hash: string;
  session_id: string;
  expires_at: Timestamp;
  rotated_at: Timestamp | null;
};

export type IdempotencyKeysTable = {
  scope: string;
  key: string;
  operation: string;
  request_hash: string;
  state: 'in_progress' | 'done';
  response_status: number | null;
  response_body: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** The request holding the key while it is in progress (see idempotency-store.ts). */
  holder: string | null;
};

export type LedgerAccountsTable = {
  id: Generated<bigint>;
  code: string;
  kind: 'user' | 'system';
  user_id: string | null;
  balance: ColumnType<bigint, bigint | undefined, never>;
  created_at: Timestamp;
};

export type LedgerTransactionsTable = {
  id: Generated<bigint>;
  reference: string;
  description: string;
  content_hash: string;
  metadata: Json;
  created_at: Timestamp;
};

export type LedgerEntriesTable = {
  id: Generated<bigint>;
  transaction_id: bigint;
  account_id: bigint;
  amount: bigint;
  balance_after: bigint;
  created_at: Timestamp;
};

/** One run of the ledger check (src/ledger/check-runs.ts). */
export type LedgerChecksTable = {
  id: Generated<bigint>;
  checked_at: Timestamp;
  ok: boolean;
  accounts: number;
  entries: bigint;
  imbalances: number;
  /** Which check ran: the entries past the checkpoint, or every entry (decision 0053). */
  kind: Generated<'incremental' | 'full'>;
};

/** The ledger check's checkpoint: one row (src/ledger/incremental-check.ts). */
export type LedgerCheckpointTable = {
  id: number;
  entry_id: bigint;
  transaction_id: bigint;
  entries: bigint;
  entries_sum: bigint;
  advanced_at: Timestamp;
};

/** Each account's entries summed up to the checkpoint. */
export type LedgerCheckAccountsTable = {
  account_id: bigint;
  entries_sum: bigint;
};

/** Postings found unbalanced or empty, examined again by every check until they are whole. */
export type LedgerCheckOpenPostingsTable = {
  transaction_id: bigint;
};

/** The figures /metrics serves, as the refresh job last read them: one row (src/figures/snapshot.ts). */
export type OperatorFiguresTable = {
  id: number;
  refreshed_at: Timestamp;
  figures: Json;
};

export type KycDocumentsTable = {
  id: string;
  user_id: string;
  storage_key: string;
  document_type: 'passport' | 'drivers_licence' | 'voters_card' | 'nin_slip';
  mime_type: 'image/jpeg' | 'image/png' | 'application/pdf';
  size_bytes: number;
  sha256: string;
  created_at: Timestamp;
};

export type KycSubmissionsTable = {
  id: string;
  user_id: string;
  tier: number;
  status: 'pending' | 'approved' | 'rejected';
  reason: string | null;
  details: Json;
  document_id: string | null;
  created_at: Timestamp;
  decided_at: Timestamp | null;
  decided_by: string | null;
  /** Tier 2: the keyed hash of the NIN; unique among pending and approved submissions that hold it. */
  nin_hash: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when the account closed: the submission is kept (AML) but holds its NIN no longer (decision 0047). */
  identity_released_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
};

/** A Tier 1 face check started by getKycLivenessUrl: its one-time state and, once used, its token. */
export type KycLivenessChecksTable = {
  id: string;
  state_hash: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  token_hash: string | null;
};

export type TopupIntentsTable = {
  id: string;
  user_id: string;
  reference: string;
  /** Kobo the user asked to pay. */
  amount: bigint;
  status: 'pending' | 'success' | 'failed';
  /** Kobo actually paid and credited; null until credited. */
  credited_amount: bigint | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  credited_at: Timestamp | null;
};

export type PaymentEventsTable = {
  id: string;
  received_at: Timestamp;
  body: string;
  body_encoding: 'utf8' | 'base64';
  body_sha256: string;
  event: string | null;
  reference: string | null;
  processed_at: Timestamp | null;
  outcome: string | null;
};

export type OpsAlertsTable = {
  id: string;
  kind: string;
  message: string;
  details: Json;
  created_at: Timestamp;
  /** Unique when set: an alert raised once per cause names the cause here. */
  dedupe_key: string | null;
};

export type DedicatedAccountsTable = {
  user_id: string;
  customer_code: string;
  account_number: string;
  account_name: string;
  bank_name: string;
  provider_slug: string;
  created_at: Timestamp;
};

export type FloatTopUpsTable = {
  id: string;
  reference: string;
  provider: string;
  /** Kobo sent. */
  amount: bigint;
  bank_code: string;
  account_number: string;
  account_name: string;
  reason: string;
  status: 'pending' | 'success' | 'failed' | 'reversed';
  transfer_code: string | null;
  failure_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  settled_at: Timestamp | null;
  closed_at: Timestamp | null;
};

export type VtuTransactionsTable = {
  id: string;
  user_id: string;
  reference: string;
  service: string;
  provider: string;
  network: string | null;
  recipient: string;
  request: Json;
  description: string;
  /** A debit: kobo charged to the wallet = wholesale + markup. A credit: the payout. */
  amount: bigint;
  /** A debit: the provider's price. A credit (airtime-to-cash): the airtime's face value. */
  wholesale: bigint;
  markup: bigint;
  direction: Generated<'debit' | 'credit'>;
  /** Kobo refunded of a success delivered in part (a social order the panel filled partly). */
  refunded: Generated<bigint>;
  status: 'processing' | 'success' | 'failed';
  provider_reference: string | null;
  token: string | null;
  units: string | null;
  pins: Json | null;
  failure_reason: string | null;
  /** The meter's, smartcard's or betting account's holder, as the provider named them. */
  customer_name: string | null;
  sent_at: Timestamp | null;
  /** Kobo of its provider's float this purchase holds from its send until it settles (float-reservations.ts). */
  float_reserved_kobo: Generated<bigint>;
  funding_reference: string | null;
  requery_attempts: Generated<number>;
  next_requery_at: Timestamp | null;
  stuck_alerted_at: Timestamp | null;
  /**
   * A success whose token or pins did not come with it: since when they are awaited (requeried on
   * next_requery_at until they come); null otherwise, and once they arrived.
   */
  delivery_awaited_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
};

export type WalletTransfersTable = {
  id: string;
  reference: string;
  sender_id: string;
  recipient_id: string;
  amount: bigint;
  narration: string | null;
  created_at: Timestamp;
};

export type VtuMarkupsTable = {
  /** Null: the default markup, which every user pays unless their level has a markup of its own. */
  level: ColumnType<string | null, string | null | undefined, never>;
  service: string;
  /** Null: the service-wide markup; a provider's own row wins over it. */
  provider: string | null;
  flat_kobo: bigint;
  /** Basis points of the wholesale price (250 = 2.5 %). */
  percent_bp: number;
  updated_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type SavingsLocksTable = {
  id: string;
  user_id: string;
  /** Kobo locked. */
  amount: bigint;
  days: number;
  status: 'active' | 'matured' | 'broken';
  /** Kobo kept when broken early; 0 otherwise. */
  penalty: Generated<bigint>;
  created_at: Timestamp;
  matures_at: Timestamp;
  closed_at: Timestamp | null;
};

export type SavingsMilestonesTable = {
  user_id: string;
  /** Kobo of savings ever locked. */
  threshold: bigint;
  reached_at: Timestamp;
  acknowledged_at: Timestamp | null;
};

export type CheckinClaimsTable = {
  user_id: string;
  /** The Africa/Lagos calendar day, YYYY-MM-DD. */
  day: ColumnType<string, string, string>;
  streak: number;
  /** Kobo accrued by this claim. */
  reward: bigint;
  claimed_at: Timestamp;
};

export type ReferralBonusesTable = {
  invitee_id: string;
  referrer_id: string;
  amount: bigint;
  qualified_at: Timestamp;
};

export type NotificationsTable = {
  id: string;
  user_id: string;
  kind: string;
  title: string;
  body: string;
  data: Json;
  /** The fact it reports (a domain event, an alert): one notification per user and source. */
  source: string;
  read_at: Timestamp | null;
  created_at: Timestamp;
};

export type BroadcastsTable = {
  id: string;
  title: string;
  body: string;
  created_by: string;
  created_at: Timestamp;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
};

export type BeneficiariesTable = {
  id: string;
  user_id: string;
  service: string;
  label: string;
  recipient: string;
  network: string | null;
  /** A flat object of strings (disco, provider, company, ...), or null. */
  details: ColumnType<unknown, string | null, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type SchedulesTable = {
  id: string;
  user_id: string;
  service: string;
  /** The buy operation's fields without the PIN, as approved (amount: the approved price). */
  order_fields: ColumnType<unknown, string, string>;
  every: string | null;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
  runs_max: number | null;
  price_tolerance_percent: number;
  status: 'active' | 'paused' | 'ended' | 'cancelled';
  next_run_at: Timestamp;
  runs: number;
  skips_in_row: number;
  paused_reason: string | null;
  run_due_at: Timestamp | null;
  run_reference: string | null;
  run_claimed_at: Timestamp | null;
  claimed_until: Timestamp | null;
  run_purchase_id: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
};

export type DisputesTable = {
  id: string;
  user_id: string;
  /** The disputed movement's reference: a purchase's, or the wallet posting's. */
  reference: string;
  movement: 'purchase' | 'wallet';
  /** The purchase disputed (vtu's id), when the movement is one. */
  purchase_id: string | null;
  description: string;
  /** Kobo the movement took from the person's accounts when it was reported (0 for a credit or a lock). */
  charged: bigint;
  movement_at: Timestamp;
  reason: 'token_not_received' | 'wrong_recipient' | 'charged_twice' | 'other';
  message: string;
  status: 'open' | 'refunded' | 'declined';
  resolution: string | null;
  /** Kobo given back by the resolution. */
  refunded: ColumnType<bigint, bigint | undefined, bigint>;
  resolved_by: string | null;
  created_at: Timestamp;
  resolved_at: Timestamp | null;
};

export type AdjustmentsTable = {
  id: string;
  user_id: string;
  direction: 'credit' | 'debit';
  /** Kobo, more than zero. */
  amount: bigint;
  /** Why, in the words the person reads in their history. */
  reason: string;
  status: 'proposed' | 'approved' | 'rejected';
  proposed_by: string;
  /** When it was proposed. */
  created_at: Timestamp;
  /** The approver or the rejecter; never the proposer of an approved one (four eyes). */
  decided_by: string | null;
  decided_at: Timestamp | null;
  reject_reason: string | null;
};

export type ReconciliationSource = 'payments' | 'data' | 'bills' | 'social';
export type ReconciliationBucket =
  | 'matched'
  | 'missingHere'
  | 'missingThere'
  | 'amountMismatch'
  | 'statusMismatch';

/** One comparison of a source's records of a period with ours (decision 0049). */
export type ReconciliationRunsTable = {
  id: string;
  source: ReconciliationSource;
  period_from: Timestamp;
  period_to: Timestamp;
  status: 'running' | 'done' | 'failed';
  /** The operator who asked; null for the morning's run. */
  requested_by: string | null;
  /** `<source>:<Lagos day>` for the morning's run: one per source and day. */
  daily_key: string | null;
  /** False where the provider has no list of its own (VTpass, the SMM panel): missingHere cannot be seen. */
  provider_list: Generated<boolean>;
  matched: Generated<number>;
  missing_here: Generated<number>;
  missing_there: Generated<number>;
  amount_mismatch: Generated<number>;
  status_mismatch: Generated<number>;
  error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
};

export type ReconciliationItemsTable = {
  id: string;
  run_id: string;
  bucket: ReconciliationBucket;
  reference: string;
  /** Our record as the run read it; null when we have none. */
  ours: Json | null;
  /** The provider's record as the run read it; null when it has none. */
  theirs: Json | null;
  resolution_action: 'credit' | 'requery' | 'ignore' | null;
  resolution_reason: string | null;
  resolution_outcome: string | null;
  resolved_by: string | null;
  resolved_at: Timestamp | null;
};

/** A pause in force of a service, or of a service through one provider (null: every provider); decision 0042. */
export type ServicePausesTable = {
  id: string;
  service: string;
  provider: string | null;
  reason: string;
  /** The administrator who paused it, or last changed its reason. */
  paused_by: string;
  paused_at: Timestamp;
  updated_at: Timestamp;
};

export type BulkOrdersTable = {
  id: string;
  user_id: string;
  service: string;
  /** Kobo charged for the lines together. */
  total: bigint;
  /** [{phone, transactionId}], in the order the lines were given. */
  lines: ColumnType<unknown, string, never>;
  created_at: Timestamp;
};

export type AccountLimitsTable = {
  user_id: string;
  /** The Lagos day `debited` counts (a date column: read and written as 'YYYY-MM-DD'). */
  debit_day: ColumnType<string, string, string>;
  debited: Generated<bigint>;
  personal_limit: bigint | null;
  pending_limit: bigint | null;
  pending_from: ColumnType<string | null, string | null | undefined, string | null>;
  updated_at: ColumnType<Date, Date, Date>;
};

/** A person's request to close their account (API.md 17.3, decision 0047): pending through the grace period. */
export type AccountClosuresTable = {
  id: string;
  user_id: string;
  status: 'pending' | 'cancelled' | 'closed';
  requested_at: Timestamp;
  /** When it takes effect: requested_at + ACCOUNT_DELETION_GRACE_DAYS. */
  effective_at: Timestamp;
  cancelled_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Who cancelled it: the person, or the service at the effective time (a reason applied again). */
  cancelled_by: ColumnType<
    'person' | 'service' | null,
    'person' | 'service' | null | undefined,
    'person' | 'service' | null
  >;
  /** The reasons that applied at the effective time, when the service cancelled it. */
  cancel_reasons: ColumnType<unknown, string | null | undefined, string | null>;
  closed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the KYC records were erased, RETENTION_YEARS after closed_at. */
  erased_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
};

/** A person's copy of their data (API.md 17.3): the file while `ready`, emptied when it expires. */
export type DataExportsTable = {
  id: string;
  user_id: string;
  status: 'preparing' | 'ready' | 'expired';
  /** The file (UTF-8 JSON) while ready; bytes rather than jsonb, so it is served as it was written. */
  content: ColumnType<Uint8Array | null, Uint8Array | null | undefined, Uint8Array | null>;
  created_at: Timestamp;
  ready_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  expires_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
};

export type DB = {
  users: UsersTable;
  otp_codes: OtpCodesTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  refresh_tokens: RefreshTokensTable;
  admin_totp: AdminTotpTable;
  audit_log: AuditLogTable;
  idempotency_keys: IdempotencyKeysTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_checks: LedgerChecksTable;
  ledger_checkpoint: LedgerCheckpointTable;
  ledger_check_accounts: LedgerCheckAccountsTable;
  ledger_check_open_postings: LedgerCheckOpenPostingsTable;
  operator_figures: OperatorFiguresTable;
  kyc_documents: KycDocumentsTable;
  kyc_submissions: KycSubmissionsTable;
  kyc_liveness_checks: KycLivenessChecksTable;
  topup_intents: TopupIntentsTable;
  payment_events: PaymentEventsTable;
  ops_alerts: OpsAlertsTable;
  dedicated_accounts: DedicatedAccountsTable;
  dedicated_account_claims: { user_id: string; claimed_at: Timestamp };
  float_top_ups: FloatTopUpsTable;
  reconcile_cursors: { name: string; position: Timestamp; updated_at: Timestamp };
  vtu_transactions: VtuTransactionsTable;
  vtu_float_reservations: {
    provider: string;
    reserved_kobo: Generated<bigint>;
    released_kobo: Generated<bigint>;
    updated_at: Timestamp;
  };
  /** Each provider's shared send rate (src/vtu/provider-rate.ts): tokens left in the second refilled_at starts. */
  vtu_provider_rate: { provider: string; tokens: number; refilled_at: Timestamp };
  vtu_markups: VtuMarkupsTable;
  savings_locks: SavingsLocksTable;
  savings_milestones: SavingsMilestonesTable;
  checkin_claims: CheckinClaimsTable;
  referral_bonuses: ReferralBonusesTable;
  notifications: NotificationsTable;
  known_devices: { user_id: string; device_hash: string; first_seen_at: Timestamp };
  wallet_transfers: WalletTransfersTable;
  push_subscriptions: {
    endpoint: string;
    user_id: string;
    p256dh: string;
    auth: string;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  email_verifications: {
    user_id: string;
    email: string;
    code_hash: string;
    expires_at: Timestamp;
    attempts: Generated<number>;
    sent_at: Timestamp;
  };
  notification_settings: { user_id: string; email: Json; push: Json; updated_at: Timestamp };
  broadcasts: BroadcastsTable;
  polls: { id: string; broadcast_id: string; question: string };
  poll_options: { id: string; poll_id: string; position: number; text: string };
  poll_votes: { poll_id: string; user_id: string; option_id: string; created_at: Timestamp };
  beneficiaries: BeneficiariesTable;
  schedules: SchedulesTable;
  disputes: DisputesTable;
  adjustments: AdjustmentsTable;
  bulk_orders: BulkOrdersTable;
  data_exports: DataExportsTable;
  account_limits: AccountLimitsTable;
  service_pauses: ServicePausesTable;
  account_closures: AccountClosuresTable;
  reconciliation_runs: ReconciliationRunsTable;
  reconciliation_items: ReconciliationItemsTable;
  ussd_sessions: UssdSessionsTable;
  ussd_steps: UssdStepsTable;
  ussd_payments: UssdPaymentsTable;
};

/** A gateway's USSD session, recorded at its first step: its start dates its purchases' references. */
export type UssdSessionsTable = {
  gateway: string;
  session_id: string;
  /** The caller's phone, E.164. */
  phone: string;
  /** The user of that phone when the session started; null for a number nobody registered. */
  user_id: string | null;
  service_code: string;
  started_at: Timestamp;
  last_seen_at: Timestamp;
};

/** One step of a session (its exact inputs, by keyed hash), claimed once; its answer once computed. */
export type UssdStepsTable = {
  gateway: string;
  session_id: string;
  text_hash: string;
  answer_type: 'CON' | 'END' | null;
  answer_screen: string | null;
  created_at: Timestamp;
};

/** A payment made by USSD, written by its acceptance's transaction: the day's USSD sum (USSD_DAILY_MAX). */
export type UssdPaymentsTable = {
  /** The purchase's reference. */
  reference: string;
  user_id: string;
  amount_kobo: bigint;
  /** The Africa/Lagos day of acceptance, YYYY-MM-DD. */
  lagos_day: ColumnType<string, string, string>;
  /** Set when the purchase failed (and was refunded): it no longer counts toward the day's sum. */
  failed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: Timestamp;
};
