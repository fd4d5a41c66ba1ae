import type { S3Client } from '@aws-sdk/client-s3';
import type { DocumentStore } from './document-store.ts';

// Identity documents in S3 or an S3-compatible object store (MinIO, R2, ...), encrypted at rest and
// read by clients only through short-lived presigned URLs.
//
// The SDK (about 22 MB of modules) is imported when a store is created, never by this file's own
// imports: a process with local storage, the default, never loads it (test/kyc/s3-sdk-loading.test.ts).

/** Keys are random hex, as in the local store, so both stores accept exactly the same keys. */
const KEY_PATTERN = /^[a-f0-9]{32,64}$/;

/** The longest a presigned URL may live: the contract's "at most 10 minutes". */
const PRESIGNED_URL_SECONDS_MAX = 600;

function checkKey(key: string): void {
  if (!KEY_PATTERN.test(key)) throw new RangeError('invalid document key: expected 32 to 64 hex characters');
}

export type S3DocumentStoreOptions = {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
};

/** The SDK's two modules, imported by createS3DocumentStore. */
type S3Sdk = typeof import('@aws-sdk/client-s3');
type S3Presigner = typeof import('@aws-sdk/s3-request-presigner');

/** What every call to the store needs, made once by createS3DocumentStore. */
type S3Connection = { client: S3Client; bucket: string; sdk: S3Sdk; presigner: S3Presigner };

export async function createS3DocumentStore(options: S3DocumentStoreOptions): Promise<DocumentStore> {
  const [sdk, presigner] = await Promise.all([
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/s3-request-presigner'),
  ]);
  const client = new sdk.S3Client({
    region: options.region,
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
    // Checksums only where S3 requires them: several S3-compatible stores reject the CRC32 headers
    // that newer SDKs send by default, and a presigned URL must not ask for checksum mode.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const connection: S3Connection = { client, bucket: options.bucket, sdk, presigner };
  return {
    kind: 's3',
    put: (key, bytes, mimeType) => put(connection, key, bytes, mimeType),
    get: (key) => get(connection, key),
    presignedUrl: (key, expiresInSeconds) => presignedUrl(connection, key, expiresInSeconds),
    delete: (key) => deleteObject(connection, key),
  };
}

/** S3's DeleteObject answers 204 whether or not the key existed: deleting twice is no error. */
async function deleteObject(connection: S3Connection, key: string): Promise<void> {
  checkKey(key);
  await connection.client.send(
    new connection.sdk.DeleteObjectCommand({ Bucket: connection.bucket, Key: key }),
  );
}

async function put(connection: S3Connection, key: string, bytes: Buffer, mimeType: string): Promise<void> {
  checkKey(key);
  await connection.client.send(
    new connection.sdk.PutObjectCommand({
      Bucket: connection.bucket,
      Key: key,
      Body: bytes,
      ContentType: mimeType,
      ContentLength: bytes.length,
      ServerSideEncryption: 'AES256',
    }),
  );
}

async function get(connection: S3Connection, key: string): Promise<Buffer | null> {
  checkKey(key);
  try {
    const response = await connection.client.send(
      new connection.sdk.GetObjectCommand({ Bucket: connection.bucket, Key: key }),
    );
    if (response.Body === undefined) throw new Error(`S3 returned no body for a document (${key})`);
    const array = await response.Body.transformToByteArray();
    return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  } catch (error) {
    if (error instanceof connection.sdk.NoSuchKey) return null;
    throw error;
  }
}

async function presignedUrl(
  connection: S3Connection,
  key: string,
  expiresInSeconds: number,
): Promise<string> {
  checkKey(key);
  if (
    !Number.isInteger(expiresInSeconds) ||
    expiresInSeconds < 1 ||
    expiresInSeconds > PRESIGNED_URL_SECONDS_MAX
  ) {
    throw new RangeError(
      `a presigned document URL lives 1 to ${PRESIGNED_URL_SECONDS_MAX} seconds, not ${expiresInSeconds}`,
    );
  }
  return connection.presigner.getSignedUrl(
    connection.client,
    new connection.sdk.GetObjectCommand({
      Bucket: connection.bucket,
      Key: key,
      ResponseCacheControl: 'private, no-store',
    }),
    { expiresIn: expiresInSeconds },
  );
}
