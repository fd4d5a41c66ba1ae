import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { DocumentStore } from './document-store.ts';

// Identity documents in a private local directory (the embedded default). The directory is never
// served as such: the service reads a document and serves it behind its own signed URL.

/** Keys are random hex: a key that is anything else is a bug, and never becomes a path. */
const KEY_PATTERN = /^[a-f0-9]{32,64}$/;

function checkKey(key: string): void {
  if (!KEY_PATTERN.test(key)) throw new RangeError('invalid document key: expected 32 to 64 hex characters');
}

export function createLocalDocumentStore(directory: string): DocumentStore {
  const root = path.resolve(directory);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  // mkdir leaves an existing directory as it was; identity documents are readable by this user only.
  chmodSync(root, 0o700);

  return {
    kind: 'local',

    async put(key, bytes) {
      checkKey(key);
      // Written to a temporary file and renamed into place, so a reader (or a crash) never sees a
      // partly written document; flushed before the rename so that a document whose row is
      // committed survives a power cut.
      const target = path.join(root, key);
      const temporary = path.join(root, `.${key}.${randomBytes(8).toString('hex')}.tmp`);
      const file = await open(temporary, 'wx', 0o600);
      try {
        try {
          await file.writeFile(bytes);
          await file.sync();
        } finally {
          await file.close();
        }
        await rename(temporary, target);
      } catch (error) {
        await unlink(temporary).catch(() => {});
        throw error;
      }
      const dir = await open(root, 'r');
      try {
        await dir.sync();
      } finally {
        await dir.close();
      }
    },

    async get(key) {
      checkKey(key);
      try {
        return await readFile(path.join(root, key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },

    async presignedUrl(key) {
      checkKey(key);
      return null;
    },

    async delete(key) {
      checkKey(key);
      try {
        await unlink(path.join(root, key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
  };
}
