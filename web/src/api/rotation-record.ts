// The rotation record (src/api/session.ts): the refresh token the tabs of this browser last got, and
// the few it replaced, in IndexedDB. IndexedDB rather than localStorage because its transactions
// are ordered across tabs: a tab that takes the refresh lock reads what the tab that held it wrote
// before letting go, where its copy of localStorage may still hold the token that was rotated.
// Without IndexedDB (a browser that refuses it) there is no record, and localStorage is read alone.

export type Rotation = { current: string; replaced: string[] };

const databaseName = 'billrail-session';
const storeName = 'rotation';
const recordKey = 'refresh';
/** Enough for the rotations a lagging copy of localStorage can be behind by. */
const replacedKept = 10;

let database: Promise<IDBDatabase | null> | null = null;

function open(): Promise<IDBDatabase | null> {
  database ??= new Promise((resolve) => {
    let request: IDBOpenDBRequest;
    try {
      request = indexedDB.open(databaseName, 1);
    } catch {
      return resolve(null); // no IndexedDB here (some private modes)
    }
    request.onupgradeneeded = () => request.result.createObjectStore(storeName);
    request.onsuccess = () => {
      // Another version of the app wants to change the database: let it.
      request.result.onversionchange = () => request.result.close();
      resolve(request.result);
    };
    request.onerror = () => resolve(null);
  });
  return database;
}

/** Runs one transaction on the record's store: what `work`'s request read, once it has committed. */
async function transact(
  mode: IDBTransactionMode,
  work: (store: IDBObjectStore) => IDBRequest | undefined,
): Promise<unknown> {
  const db = await open();
  if (db === null) return undefined;
  return new Promise((resolve) => {
    try {
      const transaction = db.transaction(storeName, mode);
      const request = work(transaction.objectStore(storeName));
      transaction.oncomplete = () => resolve(request?.result);
      transaction.onabort = () => resolve(undefined);
    } catch {
      resolve(undefined); // the database was closed under us (a newer version of the app)
    }
  });
}

const isRotation = (value: unknown): value is Rotation =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Rotation).current === 'string' &&
  Array.isArray((value as Rotation).replaced);

export async function readRotation(): Promise<Rotation | null> {
  const value = await transact('readonly', (store) => store.get(recordKey));
  return isRotation(value) ? value : null;
}

/** `current` replaced `replaced` (and whatever was current before): read and written in one transaction. */
export async function recordRotation(replaced: string | null, current: string): Promise<void> {
  await transact('readwrite', (store) => {
    const read = store.get(recordKey);
    read.onsuccess = () => {
      const before = isRotation(read.result) ? [read.result.current, ...read.result.replaced] : [];
      const all = [...new Set([replaced, ...before])].filter(
        (token): token is string => token !== null && token !== current,
      );
      store.put({ current, replaced: all.slice(0, replacedKept) } satisfies Rotation, recordKey);
    };
    return undefined;
  });
}

/** Signed out: no token of the session stays behind. */
export async function forgetRotation(): Promise<void> {
  await transact('readwrite', (store) => store.delete(recordKey));
}
