import type { Bucket } from './schemas.ts';

// One item of a run as it is stored: a reference, its bucket, and each side's record as the run read
// it (kobo as text in the JSON, since the rows are jsonb).

export type StoredRecord = {
  status: string;
  /** Kobo; absent when that side did not say (a requery without the charged amount). */
  amountKobo?: string;
  at?: string;
  userId?: string;
  kind?: string;
  providerReference?: string;
  recipient?: string;
  note?: string;
};

export type ComparedItem = {
  reference: string;
  bucket: Bucket;
  ours: StoredRecord | null;
  theirs: StoredRecord | null;
};

/** The record with its absent fields left out (the JSON stays small, the view exact). */
export function storedRecord(fields: {
  status: string;
  amountKobo?: bigint | null | undefined;
  at?: Date | null | undefined;
  userId?: string | null | undefined;
  kind?: string | null | undefined;
  providerReference?: string | null | undefined;
  recipient?: string | null | undefined;
  note?: string | null | undefined;
}): StoredRecord {
  const record: StoredRecord = { status: fields.status };
  if (fields.amountKobo !== undefined && fields.amountKobo !== null)
    record.amountKobo = fields.amountKobo.toString();
  if (fields.at !== undefined && fields.at !== null) record.at = fields.at.toISOString();
  if (fields.userId !== undefined && fields.userId !== null) record.userId = fields.userId;
  if (fields.kind !== undefined && fields.kind !== null) record.kind = fields.kind;
  if (fields.providerReference !== undefined && fields.providerReference !== null)
    record.providerReference = fields.providerReference;
  if (fields.recipient !== undefined && fields.recipient !== null) record.recipient = fields.recipient;
  if (fields.note !== undefined && fields.note !== null) record.note = fields.note;
  return record;
}
