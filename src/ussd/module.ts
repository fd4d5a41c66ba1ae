import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import { on } from '../module.ts';
import type { UssdRequest, UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { refusalOf } from './callers.ts';
import { type LoaderDeps, menuLoaders } from './loaders.ts';
import { airtimeBounds, runMenu } from './menu.ts';
import { ussdOperations } from './ops.ts';
import { markUssdPaymentFailed, type PaymentDeps, payByUssd, ussdPaymentRecorder } from './payments.ts';
import { screens } from './screens.ts';
import { answerOnce, purgeUssdSessions, touchSession } from './steps.ts';

// The USSD channel (issue 44, API.md 17.6): a person with a feature phone dials the service code and
// uses the wallet through a menu. It is a channel into the existing operations, never a second
// purchase path: balances and history through the wallet's api, plans through the catalogue's, and
// every payment through the vtu api's door (payments.ts). The gateway's wire format is an adapter's
// (src/providers/ussd/); the route (src/http/ussd-callback-route.ts) hands each step here as a
// UssdRequest and writes back the screen answered.

export type UssdModuleDeps = {
  /** The channel's tables: sessions, steps (ussd_steps) and the day's USSD payments. */
  db: Kysely<DB>;
  /** A session's start, a step's time, the Lagos day a payment counts on. */
  clock: Clock;
  logger: Logger;
  /** SECRET_PEPPER: the keyed hashes that name a step and a payment's reference (never the PIN itself). */
  pepper: string;
  /** USSD_SINGLE_MAX and USSD_DAILY_MAX, kobo, and USSD_SERVICE_CODE, as getUssdSettings tells them (config.ussd). */
  config: Pick<Config['ussd'], 'singleMaxKobo' | 'dailyMaxKobo' | 'serviceCode'>;
  /** Whether USSD is still switched on, read FOR SHARE in a payment's acceptance (auth's api). */
  ussdEnabledAmong: AuthApi['ussdEnabledAmong'];
  /** The caller's user by phone: who may use the channel (auth's api). */
  findUserByPhone: AuthApi['findUserByPhone'];
  /** A user by id: whether they switched the channel on, for getUssdSettings (auth's api). */
  findUserById: AuthApi['findUserById'];
  /** The balance and the last movements, as the app shows them (wallet's api). */
  walletOf: LoaderDeps['walletOf'];
  /** The data plans of the routed provider's cached catalogue and this person's markup (catalogue's api). */
  catalogue: LoaderDeps['catalogue'];
  /** The purchases' door: the PIN's check, the order, the acceptance, the reference (vtu's api). */
  vtu: PaymentDeps['vtu'];
};

export type UssdApi = {
  /** Answers one step of a session from the named gateway: the screen to show next. */
  answer(gateway: string, request: UssdRequest): Promise<{ screen: UssdScreen; replayed: boolean }>;
  /** Retention: one batch of the steps and sessions past their period (ussd_steps, ussd_sessions). */
  purgeSessions(before: Date, batchMax: number): Promise<number>;
};

/** The most a screen waits for the provider's catalogue: the gateway wants every answer within 2 s. */
const catalogueWaitMs = 1_500;

export function createUssdModule(deps: UssdModuleDeps): DomainModule & { api: UssdApi } {
  const payments: PaymentDeps = {
    db: deps.db,
    pepper: deps.pepper,
    vtu: deps.vtu,
    limits: { singleMaxKobo: deps.config.singleMaxKobo, dailyMaxKobo: deps.config.dailyMaxKobo },
    recordPayments: ussdPaymentRecorder(deps.ussdEnabledAmong),
  };
  const bounds = airtimeBounds(deps.config.singleMaxKobo);
  const loaderDeps: LoaderDeps = { walletOf: deps.walletOf, catalogue: deps.catalogue, catalogueWaitMs };
  return {
    operations: ussdOperations({
      db: deps.db,
      clock: deps.clock,
      serviceCode: deps.config.serviceCode,
      singleMaxKobo: deps.config.singleMaxKobo,
      dailyMaxKobo: deps.config.dailyMaxKobo,
      ussdEnabledOf: async (userId) => (await deps.findUserById(userId))?.ussd_enabled,
    }),
    jobs: [],
    // A failed purchase was refunded: it no longer counts toward the day's USSD payments.
    subscribers: [
      on('vtu.purchase_failed', (event) => markUssdPaymentFailed(deps.db, event.reference, deps.clock.now())),
    ],
    api: {
      async answer(gateway, request) {
        // A number that is no Nigerian mobile number can belong to no account.
        if (request.phone === null) return { screen: screens.unknownNumber(), replayed: false };
        const user = await deps.findUserByPhone(request.phone);
        const refusal = refusalOf(user);
        if (refusal !== null || user === undefined)
          return { screen: refusal ?? screens.unknownNumber(), replayed: false };
        const now = deps.clock.now();
        const started = await touchSession(
          deps.db,
          {
            gateway,
            sessionId: request.sessionId,
            phone: request.phone,
            userId: user.id,
            serviceCode: request.serviceCode,
          },
          now,
        );
        // A session id is the gateway's, for one phone: another phone's step under it is refused,
        // so that it never meets the first phone's stored answers or derives its references.
        if (started.phone !== request.phone) return { screen: screens.malformed(), replayed: false };
        const { startedAt } = started;
        const caller = { phone: request.phone, networkCode: request.networkCode };
        return answerOnce(
          { db: deps.db, pepper: deps.pepper },
          { gateway, sessionId: request.sessionId, inputs: request.inputs },
          now,
          async () => {
            const outcome = await runMenu(request.inputs, caller, menuLoaders(loaderDeps, user), bounds);
            if (outcome.kind === 'screen') return outcome.screen;
            return payByUssd(payments, {
              userId: user.id,
              gateway,
              sessionId: request.sessionId,
              startedAt,
              payment: outcome.payment,
              pin: outcome.pin,
              choices: outcome.choices,
              now,
            });
          },
          screens.stillWorking(),
        );
      },
      purgeSessions: (before, batchMax) => purgeUssdSessions(deps.db, before, batchMax),
    },
  };
}
