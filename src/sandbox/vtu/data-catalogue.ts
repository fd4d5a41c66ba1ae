// The sandbox data vendor's plan catalogue: SME, corporate gifting and gifting plans for the four
// networks, in the shape these vendors' GET /api/user/ returns them. Sizes, validities and prices are
// what Nigerian resellers list (late 2026); plan ids are the vendor's own integers, which differ from
// vendor to vendor, so nothing may depend on these particular numbers.

export type SandboxNetwork = 'MTN' | 'GLO' | 'AIRTEL' | '9MOBILE';

export type SandboxDataPlan = {
  id: number;
  network: SandboxNetwork;
  /** As the vendor writes it: SME, CORPORATE GIFTING, GIFTING. */
  planType: string;
  /** The size as the vendor writes it ("1.0GB"). */
  plan: string;
  validity: string;
  priceKobo: bigint;
};

type Row = [id: number, planType: string, plan: string, validity: string, naira: number];

const rows: Record<SandboxNetwork, Row[]> = {
  MTN: [
    [336, 'SME', '500.0MB', '30 days', 380],
    [337, 'SME', '1.0GB', '30 days', 560],
    [338, 'SME', '2.0GB', '30 days', 1120],
    [339, 'SME', '3.0GB', '30 days', 1680],
    [340, 'SME', '5.0GB', '30 days', 2800],
    [341, 'SME', '10.0GB', '30 days', 5600],
    [345, 'CORPORATE GIFTING', '500.0MB', '30 days', 395],
    [346, 'CORPORATE GIFTING', '1.0GB', '30 days', 585],
    [347, 'CORPORATE GIFTING', '2.0GB', '30 days', 1170],
    [348, 'CORPORATE GIFTING', '5.0GB', '30 days', 2925],
    [349, 'CORPORATE GIFTING', '10.0GB', '30 days', 5850],
    [350, 'GIFTING', '1.0GB', '1 day', 490],
    [351, 'GIFTING', '2.5GB', '2 days', 882],
    [352, 'GIFTING', '3.5GB', '30 days', 2450],
    [353, 'GIFTING', '7.0GB', '30 days', 3430],
    [354, 'GIFTING', '20.0GB', '30 days', 7350],
  ],
  GLO: [
    [260, 'SME', '1.0GB', '30 days', 420],
    [261, 'SME', '2.0GB', '30 days', 840],
    [262, 'SME', '5.0GB', '30 days', 2100],
    [270, 'CORPORATE GIFTING', '500.0MB', '30 days', 215],
    [271, 'CORPORATE GIFTING', '1.0GB', '30 days', 430],
    [272, 'CORPORATE GIFTING', '2.0GB', '30 days', 860],
    [273, 'CORPORATE GIFTING', '3.0GB', '30 days', 1290],
    [274, 'CORPORATE GIFTING', '5.0GB', '30 days', 2150],
    [275, 'CORPORATE GIFTING', '10.0GB', '30 days', 4300],
    [280, 'GIFTING', '1.5GB', '14 days', 485],
    [281, 'GIFTING', '2.6GB', '30 days', 970],
    [282, 'GIFTING', '5.0GB', '30 days', 1455],
    [283, 'GIFTING', '10.0GB', '30 days', 2910],
  ],
  AIRTEL: [
    [400, 'SME', '150.0MB', '1 day', 65],
    [401, 'SME', '300.0MB', '2 days', 120],
    [402, 'SME', '1.0GB', '7 days', 790],
    [403, 'SME', '2.0GB', '30 days', 1480],
    [410, 'CORPORATE GIFTING', '500.0MB', '30 days', 495],
    [411, 'CORPORATE GIFTING', '1.0GB', '30 days', 985],
    [412, 'CORPORATE GIFTING', '2.0GB', '30 days', 1970],
    [413, 'CORPORATE GIFTING', '5.0GB', '30 days', 4925],
    [414, 'CORPORATE GIFTING', '10.0GB', '30 days', 9850],
    [420, 'GIFTING', '1.5GB', '7 days', 980],
    [421, 'GIFTING', '3.0GB', '30 days', 1960],
    [422, 'GIFTING', '8.0GB', '30 days', 2940],
  ],
  '9MOBILE': [
    [500, 'SME', '1.0GB', '30 days', 290],
    [501, 'SME', '2.0GB', '30 days', 580],
    [510, 'CORPORATE GIFTING', '500.0MB', '30 days', 145],
    [511, 'CORPORATE GIFTING', '1.0GB', '30 days', 290],
    [512, 'CORPORATE GIFTING', '2.0GB', '30 days', 580],
    [513, 'CORPORATE GIFTING', '5.0GB', '30 days', 1450],
    [520, 'GIFTING', '1.5GB', '30 days', 1160],
    [521, 'GIFTING', '4.5GB', '30 days', 1940],
    [522, 'GIFTING', '11.0GB', '30 days', 3880],
  ],
};

/** A fresh copy of the catalogue; a test may change its copy (a price, a withdrawn plan) freely. */
export function sandboxDataPlans(): SandboxDataPlan[] {
  return (Object.keys(rows) as SandboxNetwork[]).flatMap((network) =>
    rows[network].map(([id, planType, plan, validity, naira]) => ({
      id,
      network,
      planType,
      plan,
      validity,
      // Whole naira in the table, so the conversion is an integer product.
      priceKobo: BigInt(naira) * 100n,
    })),
  );
}
