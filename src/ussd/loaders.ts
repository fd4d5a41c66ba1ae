import type { CatalogueApi } from '../catalogue/module.ts';
import { lagosDate } from '../lagos-time.ts';
import { nairaToKobo } from '../money.ts';
import type { DataPlanItem } from '../providers/vtu/vtu-provider.ts';
import { type Network, networkNames } from '../shared/networks.ts';
import type { WalletApi } from '../wallet/module.ts';
import { toGsm } from './gsm.ts';
import type { MenuLoaders, MenuPlan } from './menu.ts';
import { nairaText } from './screens.ts';

// What the menu reads for the person dialling, through the owners' apis: the wallet's balance and
// history as the app shows them, and the data plans from the routed provider's cached catalogue at
// this person's prices (the source of the app's listDataPlans). A screen that needs the provider is
// bounded: the gateway gives up after a few seconds, so the plans not ready in time answer END.

export type LoaderDeps = {
  walletOf: WalletApi['walletOf'];
  catalogue: Pick<CatalogueApi, 'providerFor' | 'dataPlans' | 'readMarkups' | 'markupAmong' | 'applyMarkup'>;
  /** The most a screen waits for the provider's catalogue. */
  catalogueWaitMs: number;
};

/** Characters a plan's label keeps, so that five lines and their prices fit one screen. */
const planLabelLengthMax = 16;
/** Characters a movement's line keeps (three of them and a heading in 160). */
const movementLineLengthMax = 48;

export function menuLoaders(deps: LoaderDeps, user: { id: string; price_level: string | null }): MenuLoaders {
  // One step may ask twice (the move and the screen): read once.
  const plans = new Map<Network, Promise<MenuPlan[] | 'not_ready'>>();
  return {
    async balanceKobo() {
      const { balances } = await deps.walletOf(user.id, 1);
      return nairaToKobo(balances.balance);
    },
    async lastTransactionLines() {
      const { movements } = await deps.walletOf(user.id, 3);
      return movements.map((movement) => {
        const [, month, day] = lagosDate(new Date(movement.createdAt)).split('-');
        const signed = movement.direction === 'debit' ? '-' : '+';
        const line = `${day}/${month} ${signed}${nairaText(nairaToKobo(movement.amount))} ${toGsm(withoutLeadingAmount(movement.description))}`;
        return line.length > movementLineLengthMax ? `${line.slice(0, movementLineLengthMax - 2)}..` : line;
      });
    },
    dataPlans(network) {
      let found = plans.get(network);
      if (found === undefined) {
        found = plansFor(deps, user, network);
        plans.set(network, found);
      }
      return found;
    },
  };
}

/**
 * A purchase's description begins with its face value ("₦100.00 MTN airtime to 0803..."), which the
 * line already shows signed: said once, the line keeps room for what was bought.
 */
const withoutLeadingAmount = (description: string): string =>
  description.replace(/^(?:₦|N)[\d,]+(?:\.\d{1,2})?\s+/, '');

async function plansFor(
  deps: LoaderDeps,
  user: { price_level: string | null },
  network: Network,
): Promise<MenuPlan[] | 'not_ready'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'not_ready'>((resolve) => {
    timer = setTimeout(() => resolve('not_ready'), deps.catalogueWaitMs);
  });
  try {
    const priced = (async () => {
      const [items, markups] = await Promise.all([
        deps.catalogue.dataPlans(network),
        deps.catalogue.readMarkups(),
      ]);
      const markup = deps.catalogue.markupAmong(
        markups,
        'data',
        deps.catalogue.providerFor('data'),
        user.price_level,
      );
      return (items ?? []).map(
        (item): MenuPlan => ({
          planId: item.planId,
          label: planLabel(item),
          priceKobo: deps.catalogue.applyMarkup(markup, item.wholesaleKobo).retailKobo,
        }),
      );
    })();
    // A catalogue that fails (the provider unreachable) is not ready either; its failure is not lost
    // to an unhandled rejection when the timer won.
    return await Promise.race([priced.catch((): 'not_ready' => 'not_ready'), late]);
  } finally {
    clearTimeout(timer);
  }
}

const planTypeShort: Readonly<Record<string, string>> = {
  SME: 'SME',
  'CORPORATE GIFTING': 'CG',
  GIFTING: 'Gift',
};

/** A plan's label on a page: its size, its kind and validity, shortened (1GB CG 30d), no network name. */
export function planLabel(plan: Pick<DataPlanItem, 'name' | 'planType' | 'validity' | 'network'>): string {
  const size = plan.name
    .replace(new RegExp(networkNames[plan.network], 'gi'), '')
    .replace(/(\d)\.0(?=\s*[KMGT]B)/gi, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  const kind = planTypeShort[plan.planType.toUpperCase()] ?? plan.planType.slice(0, 4);
  const validity =
    plan.validity === null ? '' : plan.validity.replace(/\s*days?\b/i, 'd').replace(/\s+/g, '');
  const label = toGsm([size, kind, validity].filter((part) => part !== '').join(' '));
  return label.length > planLabelLengthMax ? label.slice(0, planLabelLengthMax) : label;
}
