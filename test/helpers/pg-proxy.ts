import net from 'node:net';

// A TCP proxy between the service's pool and PostgreSQL that reads the client's side of the wire
// protocol, to reproduce the one fault no test can provoke otherwise: a COMMIT that PostgreSQL
// carried out but whose answer never reached the client (a connection cut at the wrong moment).
// Armed, it cuts the connection of the next transaction that ran a statement matching a pattern,
// right after PostgreSQL answered its COMMIT and before the answer is passed on. It can also hold
// back the answers of statements matching a pattern, carried out but not yet heard of by the service,
// to decide what happens in between (test/auth/pin-races.test.ts). The soak (bench/soak/) puts it in
// front of every service process to cut the database away for a while: cutAll().

export type PgProxy = {
  /** The database URL to give the service: the same database, through the proxy. */
  url: string;
  /** Cuts the next transaction whose statements match, once its COMMIT has been carried out. */
  armCommitCut(statement: RegExp): void;
  /** Resolves when the armed cut has happened. */
  cut: () => Promise<void>;
  /**
   * Holds back the answer of every statement matching, on each connection that runs one, until
   * release(): PostgreSQL has carried the statement out (read its rows) but the service waits.
   * `held()` counts the statements answered and held so far.
   */
  holdAnswers(statement: RegExp): { held(): number; release(): void };
  /**
   * Cuts the database away until restore(). `reset` (a database that went away): every connection
   * open now is closed, and each new one is accepted then closed at once. `silent` (a network
   * partition, packets dropped): nothing passes either way on the open connections and new ones are
   * accepted but never answered; restore() then closes all of them, as the network's timeouts would.
   */
  cutAll(mode: 'reset' | 'silent'): { restore(): void };
  close(): Promise<void>;
};

/** Frontend messages: a type byte and a length that counts itself (the startup message has no type). */
type Message = { type: string; body: Buffer };

function cString(buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset);
  return [buffer.toString('utf8', offset, end), end + 1];
}

export async function startPgProxy(databaseUrl: string): Promise<PgProxy> {
  const target = new URL(databaseUrl);
  let armed: RegExp | null = null;
  let cutDone: () => void = () => undefined;
  let cutPromise = Promise.resolve();
  const sockets = new Set<net.Socket>();
  let holding: RegExp | null = null;
  let heldCount = 0;
  const releases = new Set<() => void>();
  let cutMode: 'reset' | 'silent' | null = null;

  const server = net.createServer((client) => {
    if (cutMode !== null) {
      if (cutMode === 'reset') client.destroy();
      else sockets.add(client.on('error', () => undefined).on('close', () => sockets.delete(client)));
      return;
    }
    const upstream = net.connect({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(client);
    sockets.add(upstream);
    const statements = new Map<string, string>();
    let startupSeen = false;
    let pending = Buffer.alloc(0);
    let matchedInTransaction = false;
    let cutting = false;
    // The answers held back on this connection (null when not holding).
    let held: Buffer[] | null = null;

    const destroyBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', destroyBoth);
    upstream.on('error', destroyBoth);
    // A closed socket leaves the set, so that a long run (the soak) does not keep every one it saw.
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });

    upstream.on('data', (chunk) => {
      if (cutMode === 'silent') return;
      if (cutting) {
        // PostgreSQL has answered the COMMIT: it is durable. The client never hears of it.
        cutting = false;
        destroyBoth();
        cutDone();
        return;
      }
      if (held !== null) {
        if (held.length === 0) heldCount++;
        held.push(chunk);
        return;
      }
      client.write(chunk);
    });

    const inspect = (message: Message): boolean => {
      let text: string | undefined;
      if (message.type === 'Q') [text] = cString(message.body, 0);
      if (message.type === 'P') {
        const [name, next] = cString(message.body, 0);
        [text] = cString(message.body, next);
        statements.set(name, text);
      }
      if (message.type === 'B') {
        const [, next] = cString(message.body, 0);
        const [name] = cString(message.body, next);
        text = statements.get(name);
      }
      if (text !== undefined && holding?.test(text) && held === null) {
        held = [];
        releases.add(() => {
          const chunks = held ?? [];
          held = null;
          for (const chunk of chunks) client.write(chunk);
        });
      }
      if (text === undefined || armed === null) return false;
      if (armed.test(text)) matchedInTransaction = true;
      const word = text.trim().toLowerCase();
      if (word.startsWith('begin')) matchedInTransaction = false;
      if (message.type === 'Q' && word === 'commit' && matchedInTransaction) {
        armed = null;
        matchedInTransaction = false;
        return true;
      }
      return false;
    };

    client.on('data', (chunk) => {
      if (cutMode === 'silent') return;
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!startupSeen) {
          if (pending.length < 4) return;
          const length = pending.readInt32BE(0);
          if (pending.length < length) return;
          upstream.write(pending.subarray(0, length));
          pending = pending.subarray(length);
          startupSeen = true;
          continue;
        }
        if (pending.length < 5) return;
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) return;
        const raw = pending.subarray(0, 1 + length);
        pending = pending.subarray(1 + length);
        const isCut = inspect({ type: String.fromCharCode(raw[0]!), body: raw.subarray(5) });
        if (isCut) cutting = true;
        upstream.write(raw);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    armCommitCut(statement) {
      armed = statement;
      cutPromise = new Promise<void>((resolve) => {
        cutDone = resolve;
      });
    },
    cut: () => cutPromise,
    holdAnswers(statement) {
      holding = statement;
      heldCount = 0;
      return {
        held: () => heldCount,
        release() {
          holding = null;
          for (const release of releases) release();
          releases.clear();
        },
      };
    },
    cutAll(mode) {
      cutMode = mode;
      if (mode === 'reset') for (const socket of sockets) socket.destroy();
      return {
        restore() {
          if (cutMode === 'silent') for (const socket of sockets) socket.destroy();
          cutMode = null;
        },
      };
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
