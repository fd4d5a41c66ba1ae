import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { getKycStatus } from './service.ts';

// What KYC keeps about a person, for their data export (API.md 17.3): the status of each tier as
// getKycStatus gives it, and every submission with what was submitted (its details: the NIN's last
// four digits, the phone, the bank account) and the document's description, never its bytes.

export type KycPersonalData = {
  status: Awaited<ReturnType<typeof getKycStatus>>;
  submissions: Array<{
    id: string;
    tier: number;
    status: 'pending' | 'approved' | 'rejected';
    reason: string | null;
    details: unknown;
    submittedAt: string;
    decidedAt: string | null;
    document: { id: string; type: string; mimeType: string; sizeBytes: number; uploadedAt: string } | null;
  }>;
};

export async function kycPersonalDataOf(db: Kysely<DB>, userId: string): Promise<KycPersonalData> {
  const [status, rows] = await Promise.all([
    getKycStatus(db, userId),
    db
      .selectFrom('kyc_submissions as s')
      .leftJoin('kyc_documents as d', 'd.id', 's.document_id')
      .select([
        's.id',
        's.tier',
        's.status',
        's.reason',
        's.details',
        's.created_at',
        's.decided_at',
        'd.id as document_id',
        'd.document_type',
        'd.mime_type',
        'd.size_bytes',
        'd.created_at as document_created_at',
      ])
      .where('s.user_id', '=', userId)
      .orderBy('s.created_at')
      .execute(),
  ]);
  return {
    status,
    submissions: rows.map((row) => ({
      id: row.id,
      tier: row.tier,
      status: row.status,
      reason: row.reason,
      details: typeof row.details === 'string' ? JSON.parse(row.details) : row.details,
      submittedAt: row.created_at.toISOString(),
      decidedAt: row.decided_at?.toISOString() ?? null,
      document:
        row.document_id === null
          ? null
          : {
              id: row.document_id,
              type: row.document_type!,
              mimeType: row.mime_type!,
              sizeBytes: row.size_bytes!,
              uploadedAt: row.document_created_at!.toISOString(),
            },
    })),
  };
}
