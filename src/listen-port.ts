import { type AddressInfo, createServer } from 'node:net';
import type { Config } from './config.ts';

/** The configuration with the port the API listens on, and the hold on that port to let go of. */
export type PortChoice = {
  config: Config;
  /** Frees the port for the app's own listener: called right before it listens. */
  release(): Promise<void>;
};

/**
 * The port the API listens on, known before anything is built: PORT, or with PORT=0 one the system
 * chooses now, so that the public base URL the modules are given (config.ts publicBaseUrl) is the one
 * the service answers at. A listener of its own holds the port until `release()`, which the caller
 * makes just before the app listens on it: only that instant is open to another socket taking it, and
 * the system hands a port asked for as 0 to one socket at a time.
 */
export async function choosePort(config: Config): Promise<PortChoice> {
  const held = await holdPort(config.http);
  return { config: { ...config, http: { ...config.http, port: held.port } }, release: held.release };
}

/** A port to listen on, and the hold on it to let go of right before listening. */
export type HeldPort = { port: number; release(): Promise<void> };

/**
 * `port` itself when it is not 0 (nothing held); with 0, one the system chooses now on `host`, held as
 * choosePort says. The standalone sandbox (src/sandbox/main.ts) knows its own address this way too.
 */
export async function holdPort(listen: { port: number; host: string }): Promise<HeldPort> {
  if (listen.port !== 0) return { port: listen.port, release: async () => {} };
  // Nobody knows the port yet; a connection that comes anyway is closed at once.
  const holder = createServer((socket) => socket.destroy());
  // The hold keeps no process alive: one whose start fails exits as it would have.
  holder.unref();
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen({ port: 0, host: listen.host, exclusive: true }, () => resolve());
  });
  const { port } = holder.address() as AddressInfo;
  return {
    port,
    release: () =>
      new Promise<void>((resolve, reject) => holder.close((error) => (error ? reject(error) : resolve()))),
  };
}
