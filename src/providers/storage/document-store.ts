// Private storage for identity documents: a local directory outside anything served (the embedded
// default) or S3-compatible object storage. Keys are random; nothing about a document is guessable
// from its key.

export type DocumentStore = {
  kind: 'local' | 's3';
  put(key: string, bytes: Buffer, mimeType: string): Promise<void>;
  /** The bytes exactly as stored, or null when there is no such object. */
  get(key: string): Promise<Buffer | null>;
  /**
   * S3 only: a presigned GET URL valid for expiresInSeconds that serves the object with
   * Cache-Control "private, no-store". The local store returns null: the service serves the bytes
   * itself behind its own signed URL.
   */
  presignedUrl(key: string, expiresInSeconds: number): Promise<string | null>;
  /** Deletes the object for good (a closed account's records past retention); none there is no error. */
  delete(key: string): Promise<void>;
};
