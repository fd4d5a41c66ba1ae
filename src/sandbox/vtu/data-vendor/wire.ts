import type { SandboxDataPlan, SandboxNetwork } from '../data-catalogue.ts';
import type { SandboxDataOrder, SandboxDataState } from '../data-state.ts';

// The data vendor's JSON (a Django REST framework app's shapes, shared/reference/providers.md section
// 3.1): an order, the account with its plans, field errors, and the vendors' way of writing naira.

export type Body = Record<string, unknown>;
export type Kind = SandboxDataOrder['kind'];

export const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

export function orderJson(order: SandboxDataOrder) {
  const common = {
    id: order.id,
    ident: order.ident,
    network: order.networkId,
    mobile_number: order.mobileNumber,
    plan_network: order.network,
    Status: order.status,
    api_response: order.apiResponse,
    balance_before: nairaText(order.balanceBeforeKobo),
    balance_after: nairaText(order.balanceAfterKobo),
    payment_medium: 'MAIN WALLET',
    client_ip: '127.0.0.1',
    create_date: order.createdAt.toISOString(),
    Ported_number: order.ported,
  };
  if (order.kind === 'topup') {
    return {
      ...common,
      airtime_type: 'VTU',
      amount: nairaText(order.amountKobo ?? 0n),
      paid_amount: nairaText(order.priceKobo),
    };
  }
  const plan = order.plan;
  return {
    ...common,
    plan: plan?.id ?? null,
    plan_type: plan?.planType ?? null,
    plan_name: plan?.plan ?? null,
    duration: plan?.validity ?? null,
    plan_amount: nairaText(order.priceKobo),
  };
}

/** GET /api/user/: the vendor account, its plans by network and its airtime percentages. */
export function accountJson(state: SandboxDataState) {
  const networks: SandboxNetwork[] = ['MTN', 'GLO', 'AIRTEL', '9MOBILE'];
  const planJson = (plan: SandboxDataPlan) => ({
    id: plan.id,
    dataplan_id: String(plan.id),
    network: state.networkIds[plan.network],
    plan_type: plan.planType,
    plan_network: plan.network,
    month_validate: plan.validity,
    plan: plan.plan,
    plan_amount: nairaText(plan.priceKobo),
  });
  return {
    user: {
      id: 1,
      username: 'billrail',
      email: 'vendor@billrail.example',
      FullName: 'Billrail Sandbox',
      Phone: '08030000000',
      user_type: 'API',
      email_verify: true,
      wallet_balance: nairaText(state.balanceKobo),
      bonus_balance: '0.0',
    },
    Dataplans: Object.fromEntries(
      networks.map((n) => [`${n}_PLAN`, { ALL: state.plans.filter((p) => p.network === n).map(planJson) }]),
    ),
    topuppercentage: Object.fromEntries(networks.map((n) => [n, { percent: Number(state.topupPercent) }])),
  };
}

export function successMessage(
  kind: Kind,
  mobileNumber: string,
  plan: SandboxDataPlan | null,
  amountKobo: bigint | null,
) {
  if (kind === 'topup')
    return `You have successfully topped up ₦${nairaText(amountKobo ?? 0n)} airtime to ${mobileNumber}`;
  return `Dear Customer, You have successfully gifted ${mobileNumber} with ${plan?.plan ?? ''} of Data. Thank you`;
}

export function failedMessage(mobileNumber: string) {
  return `Transaction to ${mobileNumber} failed at the network, please try again later`;
}

/** Naira as these vendors write decimals: "560.0", "97.5", "97.25". */
export function nairaText(kobo: bigint): string {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  const fraction = (abs % 100n).toString().padStart(2, '0').replace(/0$/, '');
  return `${negative ? '-' : ''}${abs / 100n}.${fraction === '' ? '0' : fraction}`;
}

export function required(field: string): Record<string, string[]> {
  return { [field]: ['This field is required.'] };
}

/** A positive whole number from JSON or a form: 5 or "5". */
export function wholeNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value)) return Number(value);
  return null;
}

export function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}
