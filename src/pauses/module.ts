import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config, VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import { pauseOperations } from './ops.ts';
import { createPauseCopy, type Pause, pauseAmong, pausedError } from './service-pauses.ts';

export type { Pause };

// Operators' pauses of a service, or of a service through one provider (API.md section 17.4,
// decision 0042): the admin operations that set and lift them, and what the purchases and the
// catalogue ask of them. Every process keeps a copy of the pauses, read again when older than
// PAUSES_REFRESH_MS and dropped when this process changes them (service-pauses.ts).

export type PausesModuleDeps = {
  /** The database: this module's table (service_pauses). */
  db: Kysely<DB>;
  /** When a pause was set and lifted. */
  clock: Clock;
  /** How old this process's copy of the pauses may be, ms (PAUSES_REFRESH_MS). */
  config: Config['pauses'];
  /** Which provider each service is routed to now (VTU_ROUTES): whether a provider's pause is in effect, as listed. */
  routes: Config['vtu']['routes'];
};

export type PausesApi = {
  /** The pause in force that stops buying the service through the provider, or null (this process's copy). */
  pauseOf(service: VtuServiceName, provider: VtuProviderName): Promise<Pause | null>;
  /** Throws 503 SERVICE_PAUSED when buying the service through the provider is paused: before any debit. */
  requireOpen(service: VtuServiceName, provider: VtuProviderName): Promise<void>;
};

export type PausesModule = DomainModule & { api: PausesApi };

export function createPausesModule(deps: PausesModuleDeps): PausesModule {
  const copy = createPauseCopy(deps.db, deps.config.refreshMs);
  const pauseOf: PausesApi['pauseOf'] = async (service, provider) =>
    pauseAmong(await copy.current(), service, provider);
  return {
    operations: pauseOperations({ db: deps.db, now: () => deps.clock.now(), routes: deps.routes, copy }),
    jobs: [],
    subscribers: [],
    api: {
      pauseOf,
      async requireOpen(service, provider) {
        const pause = await pauseOf(service, provider);
        if (pause !== null) throw pausedError(pause);
      },
    },
  };
}
