import { call, must, type Session } from './client.ts';
import { count, type Expected, koboOf, outcomeOfDigit, type Person } from './model.ts';
import { between, pick, type Soak, untilStopped } from './soak-context.ts';

// Purchases of every kind, each for a recipient whose last digit picks the sandbox's outcome
// (API.md section 8): 1 failure, 2 pending then success, 3 pending then failure, 4 timeout then
// success, 6 success whose token or pins come later, any other digit success at once. The amount
// charged is the one the API answered; the end the model expects is the digit's.

const OUTCOME_DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'] as const;

export type Catalogue = {
  dataPlan: { plan_id: string; amount: number };
  cablePlan: { plan_id: string; amount: number };
  disco: string;
  betCompany: string;
  examPin: { variation: string; amount: number };
};

/** The prices and ids the purchases need, read once from the catalogue as an app reads them. */
export async function readCatalogue(soak: Soak, session: Session): Promise<Catalogue> {
  const get = <T>(op: string, data: object) =>
    must<T>(call(soak.client, op, data, { session, method: 'GET' }), op);
  type Items<T> = { items: T[] };
  const data = await get<Items<{ plan_id: string; amount: number }>>('listDataPlans', { network: 'mtn' });
  const cable = await get<Items<{ plan_id: string; amount: number }>>('listCablePlans', {
    identifier: 'dstv',
  });
  const discos = await get<Items<{ id: string }>>('listElectricityPlans', {});
  const bets = await get<Items<{ id: string }>>('listBetCompanies', {});
  const pins = await get<Items<{ variation: string; amount: number }>>('listEducationPins', { exam: 'waec' });
  const first = <T>(items: T[], what: string): T => {
    if (items[0] === undefined) throw new Error(`the catalogue has no ${what}`);
    return items[0];
  };
  return {
    dataPlan: first(data.items, 'MTN data plan'),
    cablePlan: first(cable.items, 'DStv plan'),
    disco: first(discos.items, 'disco').id,
    betCompany: first(bets.items, 'betting company').id,
    examPin: first(pins.items, 'WAEC pin'),
  };
}

/** Ten random digits then the outcome digit (an MTN number when `prefix` is 0803). */
const recipient = (prefix: string, length: number, digit: string) =>
  `${prefix}${String(between(0, 10 ** (length - prefix.length - 1) - 1)).padStart(length - prefix.length - 1, '0')}${digit}`;

type Order = { op: string; service: string; recipient: string; fields: Record<string, unknown> };

/** ₦100–₦500 of MTN airtime for a number ending in `digit`. */
export function airtimeOrder(digit: string): { network: 'mtn'; phone: string; amount: number } {
  return { network: 'mtn', phone: recipient('0803', 11, digit), amount: between(1, 5) * 100 };
}

export function orderOf(kind: number, digit: string, catalogue: Catalogue): Order {
  const phone = recipient('0803', 11, '5');
  switch (kind) {
    case 0: {
      const fields = airtimeOrder(digit);
      return { op: 'buyAirtime', service: 'airtime', recipient: fields.phone, fields };
    }
    case 1: {
      const to = recipient('0803', 11, digit);
      const { plan_id, amount } = catalogue.dataPlan;
      return {
        op: 'buyData',
        service: 'data',
        recipient: to,
        fields: { network: 'mtn', plan_id, phone: to, amount },
      };
    }
    case 2: {
      const iuc = recipient('70', 10, digit);
      const { plan_id, amount } = catalogue.cablePlan;
      return {
        op: 'subscribeCable',
        service: 'cable',
        recipient: iuc,
        fields: { identifier: 'dstv', iuc, plan_id, amount, phone },
      };
    }
    case 3: {
      const meter = recipient('450', 11, digit);
      return {
        op: 'buyElectricity',
        service: 'electricity',
        recipient: meter,
        fields: { plan: catalogue.disco, meter, type: 'prepaid', amount: between(10, 20) * 100, phone },
      };
    }
    case 4: {
      const customer = recipient('12', 8, digit);
      return {
        op: 'fundBet',
        service: 'betting',
        recipient: customer,
        fields: {
          betting_company: catalogue.betCompany,
          customer_id: customer,
          amount: between(1, 10) * 100,
        },
      };
    }
    default: {
      const to = recipient('0803', 11, digit);
      const { variation, amount } = catalogue.examPin;
      return {
        op: 'buyEducationPin',
        service: 'education',
        recipient: to,
        fields: { exam: 'waec', variation, quantity: 1, amount, phone: to },
      };
    }
  }
}

const KINDS = 6;

/** One purchase; the model learns what it charged, or that it was refused before any debit. */
async function purchase(soak: Soak, person: Person, order: Order): Promise<void> {
  const faultAtStart = soak.model.providerFaultOn.value;
  const key = crypto.randomUUID();
  const send = () =>
    call(soak.client, order.op, { ...order.fields, pin: soak.pin }, { session: person.session, key });
  const settle = async (): Promise<boolean> => {
    const outcome = await send();
    if (outcome.kind === 'unresolved') return false;
    if (outcome.status !== 200) {
      count(soak.model, order.op, `HTTP ${outcome.status} ${outcome.body.error?.code ?? ''}`);
      return true;
    }
    const accepted = outcome.body.data as { id: string; reference: string; amount: number };
    const faulted = faultAtStart || soak.model.providerFaultOn.value;
    const expected: Expected | null = faulted ? null : outcomeOfDigit(order.recipient);
    soak.model.purchases.push({
      userId: person.session.userId,
      id: accepted.id,
      reference: accepted.reference,
      service: order.service,
      recipient: order.recipient,
      chargedKobo: koboOf(accepted.amount),
      expected,
      via: 'direct',
      acceptedAt: performance.now(),
    });
    count(
      soak.model,
      order.op,
      `accepted, digit ${order.recipient.at(-1)}${faulted ? ' (provider fault on)' : ''}`,
    );
    return true;
  };
  if (!(await settle())) soak.model.unresolved.push({ what: `${order.op} ${key}`, retry: settle });
}

export function drivePurchases(soak: Soak, catalogue: Catalogue): Promise<void> {
  return untilStopped(soak, async () => {
    const order = orderOf(between(0, KINDS - 1), pick(OUTCOME_DIGITS), catalogue);
    await purchase(soak, pick(soak.model.people), order);
  });
}
