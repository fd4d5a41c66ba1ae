// Data plans as the money apps list them: grouped by type (SME, corporate gifting, gifting), each
// group from the smallest bundle to the largest and, for the same size, the cheapest first. The size
// is read from the plan's name, which the vendors write in more than one way ("1.0GB",
// "MTN N1000 1.5GB - 30 days"), so that it is shown once, plainly ("1.5 GB"), and never with a
// price of its own beside ours.

/**
 * What listDataPlans answers for each plan, as far as listing it needs: written out rather than taken
 * from the API client's types, so that the service's own tests can import this module too.
 */
export type DataPlan = {
  plan_id: string;
  planType: string;
  name: string;
  validity: string | null;
  amount: number;
};
export type PlanGroup = { planType: string; label: string; plans: DataPlan[] };

const megabytesPer: Record<string, number> = { KB: 1 / 1024, MB: 1, GB: 1024, TB: 1024 * 1024 };
const sizePattern = /(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB)\b/i;

/** The bundle's size as written plainly ("1.5 GB", "500 MB"), or null when its name gives none. */
export function planSize(plan: DataPlan): { text: string; megabytes: number } | null {
  const match = sizePattern.exec(plan.name);
  if (match === null) return null;
  const unit = match[2]!.toUpperCase();
  const amount = Number(match[1]);
  return { text: `${amount} ${unit}`, megabytes: amount * megabytesPer[unit]! };
}

/** What the plan is called on a card and in the summary: its size, or its name when that has none. */
export const planTitle = (plan: DataPlan): string => planSize(plan)?.text ?? plan.name;

/** The catalogue's types in the order people look for them; any other type follows, by name. */
const typeOrder = ['SME', 'CG', 'GIFTING'];
const typeLabels: Record<string, string> = { SME: 'SME', CG: 'Corporate gifting', GIFTING: 'Gifting' };

export function planTypeLabel(planType: string): string {
  const known = typeLabels[planType.toUpperCase()];
  if (known !== undefined) return known;
  const lower = planType.toLowerCase();
  return lower.charAt(0).toUpperCase() + lower.slice(1);
}

function byTypeOrder(a: string, b: string): number {
  const rank = (type: string) => {
    const index = typeOrder.indexOf(type.toUpperCase());
    return index === -1 ? typeOrder.length : index;
  };
  return rank(a) - rank(b) || a.localeCompare(b);
}

/** Smallest first; a plan whose size cannot be read goes after the rest; then the cheaper first. */
function bySizeThenPrice(a: DataPlan, b: DataPlan): number {
  const size = (plan: DataPlan) => planSize(plan)?.megabytes ?? Number.POSITIVE_INFINITY;
  return size(a) - size(b) || a.amount - b.amount;
}

export function groupPlans(plans: readonly DataPlan[]): PlanGroup[] {
  const byType = new Map<string, DataPlan[]>();
  for (const plan of plans) byType.set(plan.planType, [...(byType.get(plan.planType) ?? []), plan]);
  return [...byType.keys()].sort(byTypeOrder).map((planType) => ({
    planType,
    label: planTypeLabel(planType),
    plans: byType.get(planType)!.sort(bySizeThenPrice),
  }));
}
