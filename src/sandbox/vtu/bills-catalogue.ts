// The sandbox bills provider's catalogue: VTpass's categories, serviceIDs and variation codes
// (shared/reference/providers.md sections 2, 8-11) with 2025-like prices. Prices are whole kobo
// (bigint) here and go out as VTpass's decimal strings. StarTimes and the exam services answer with
// VTpass's misspelt `varations` list, the rest with `variations`, since the real API does both.

export type BillsCategory =
  | 'airtime'
  | 'data'
  | 'tv-subscription'
  | 'electricity-bill'
  | 'education'
  | 'betting';

export type BillsVariation = { code: string; name: string; amountKobo: bigint };

export type BillsService = {
  serviceID: string;
  name: string;
  category: BillsCategory;
  /** For services bought by amount (airtime, electricity, betting, cable renewals). */
  minimumKobo: bigint;
  maximumKobo: bigint;
  /** Empty for airtime and betting; electricity's are prepaid/postpaid at no fixed price. */
  variations: BillsVariation[];
  /** Whether a variation fixes the price (data, cable, exams) or the buyer names the amount. */
  fixedPrice: boolean;
  spelling: 'variations' | 'varations';
};

export const categoryNames: Record<BillsCategory, string> = {
  airtime: 'Airtime Recharge',
  data: 'Data Services',
  'tv-subscription': 'TV Subscription',
  'electricity-bill': 'Electricity Bill',
  education: 'Education',
  betting: 'Betting Wallet Funding',
};

const naira = (amount: number): bigint => BigInt(amount) * 100n;
const v = (code: string, name: string, amountKobo: bigint): BillsVariation => ({ code, name, amountKobo });

function byAmount(
  category: BillsCategory,
  serviceID: string,
  name: string,
  minimum: number,
  maximum: number,
): BillsService {
  return {
    serviceID,
    name,
    category,
    minimumKobo: naira(minimum),
    maximumKobo: naira(maximum),
    variations: [],
    fixedPrice: false,
    spelling: 'variations',
  };
}

function byVariation(
  category: BillsCategory,
  serviceID: string,
  name: string,
  variations: BillsVariation[],
  spelling: BillsService['spelling'] = 'variations',
): BillsService {
  return {
    serviceID,
    name,
    category,
    minimumKobo: naira(1),
    maximumKobo: naira(1_000_000),
    variations,
    fixedPrice: true,
    spelling,
  };
}

/** Monthly/renewable TV plans a smartcard can be "on" (verify's Current_Bouquet), by provider. */
export const renewablePlans: Record<string, string[]> = {
  dstv: ['dstv-padi', 'dstv-yanga', 'dstv-confam', 'dstv79', 'dstv7', 'dstv3'],
  gotv: ['gotv-jinja', 'gotv-jolli', 'gotv-max', 'gotv-supa', 'gotv-supa-plus'],
  startimes: ['nova', 'basic', 'smart', 'classic', 'super'],
  showmax: ['full', 'mobile_only'],
};

const electricity = (serviceID: string, name: string) => ({
  ...byAmount('electricity-bill', serviceID, name, 1_000, 500_000),
  variations: [v('prepaid', 'Prepaid', 0n), v('postpaid', 'Postpaid', 0n)],
});
const betting = (serviceID: string, name: string) => byAmount('betting', serviceID, name, 100, 500_000);

export const billsServices: BillsService[] = [
  byAmount('airtime', 'mtn', 'MTN Airtime VTU', 50, 50_000),
  byAmount('airtime', 'glo', 'GLO Airtime', 50, 50_000),
  byAmount('airtime', 'airtel', 'Airtel Airtime VTU', 50, 50_000),
  byAmount('airtime', 'etisalat', '9mobile Airtime VTU', 50, 50_000),

  byVariation('data', 'mtn-data', 'MTN Data', [
    v('mtn-10mb-100', 'MTN N100 100MB - 24 hrs', naira(100)),
    v('mtn-50mb-200', 'MTN N200 200MB - 2 days', naira(200)),
    v('mtn-sme-1gb', 'MTN SME 1GB - 30 days', 28_950n),
    v('mtn-100mb-1000', 'MTN N1000 1.5GB - 30 days', naira(1_000)),
    v('mtn-20hrs-1500', 'MTN N1500 6GB - 7 days', naira(1_500)),
    v('mtn-500mb-2000', 'MTN N2000 4.5GB - 30 days', naira(2_000)),
    v('mtn-3gb-2500', 'MTN N2500 6GB - 30 days', naira(2_500)),
    v('mtn-data-3500', 'MTN N3500 10GB - 30 days', naira(3_500)),
    v('mtn-100hr-5000', 'MTN N5000 15GB - 30 days', naira(5_000)),
  ]),
  byVariation('data', 'glo-data', 'Glo Data', [
    v('glo100', 'Glo Data N100 - 105MB - 2 days', naira(100)),
    v('glo200', 'Glo Data N200 - 350MB - 4 days', naira(200)),
    v('glo500', 'Glo Data N500 - 1.05GB - 14 days', naira(500)),
    v('glo1000', 'Glo Data N1000 - 2.5GB - 30 days', naira(1_000)),
    v('glo2000', 'Glo Data N2000 - 5.8GB - 30 days', naira(2_000)),
    v('glo2500', 'Glo Data N2500 - 7.7GB - 30 days', naira(2_500)),
  ]),
  byVariation('data', 'airtel-data', 'Airtel Data', [
    v('airt-100', 'Airtel N100 100MB - 1 day', naira(100)),
    v('airt-200', 'Airtel N200 200MB - 3 days', naira(200)),
    v('airt-500', 'Airtel N500 750MB - 14 days', naira(500)),
    v('airt-1000', 'Airtel N1000 1.5GB - 30 days', naira(1_000)),
    v('airt-1500', 'Airtel N1500 3GB - 30 days', naira(1_500)),
    v('airt-2000', 'Airtel N2000 4.5GB - 30 days', naira(2_000)),
    v('airt-3000', 'Airtel N3000 10GB - 30 days', naira(3_000)),
  ]),
  byVariation('data', 'etisalat-data', '9mobile Data', [
    v('eti-100', '9mobile N100 100MB - 1 day', naira(100)),
    v('eti-200', '9mobile N200 650MB - 1 day', naira(200)),
    v('eti-500', '9mobile N500 500MB - 30 days', naira(500)),
    v('eti-1000', '9mobile N1000 1.5GB - 30 days', naira(1_000)),
    v('eti-2000', '9mobile N2000 4.5GB - 30 days', naira(2_000)),
  ]),

  byVariation('tv-subscription', 'dstv', 'DSTV Subscription', [
    v('dstv-padi', 'DStv Padi N4,400', naira(4_400)),
    v('dstv-yanga', 'DStv Yanga N6,000', naira(6_000)),
    v('dstv-confam', 'DStv Confam N11,000', naira(11_000)),
    v('dstv79', 'DStv Compact N19,000', naira(19_000)),
    v('dstv7', 'DStv Compact Plus N30,000', naira(30_000)),
    v('dstv3', 'DStv Premium N44,500', naira(44_500)),
    v('dstv6', 'DStv Asia N14,900', naira(14_900)),
    v('padi-extra', 'DStv Padi + ExtraView N10,400', naira(10_400)),
    v('yanga-extra', 'DStv Yanga + ExtraView N12,000', naira(12_000)),
    v('confam-extra', 'DStv Confam + ExtraView N17,000', naira(17_000)),
    v('dstv30', 'DStv Compact + Extra View N25,000', naira(25_000)),
    v('extraview-access', 'ExtraView Access N6,000', naira(6_000)),
  ]),
  byVariation('tv-subscription', 'gotv', 'Gotv Payment', [
    v('gotv-lite', 'GOtv Lite N2,100', naira(2_100)),
    v('gotv-jinja', 'GOtv Jinja N3,900', naira(3_900)),
    v('gotv-jolli', 'GOtv Jolli N5,800', naira(5_800)),
    v('gotv-max', 'GOtv Max N8,500', naira(8_500)),
    v('gotv-supa', 'GOtv Supa N11,400', naira(11_400)),
    v('gotv-supa-plus', 'GOtv Supa Plus N15,700', naira(15_700)),
    v('gotv-lite-3months', 'GOtv Lite (3 Months) N5,500', naira(5_500)),
    v('gotv-lite-1year', 'GOtv Lite (1 Year) N16,000', naira(16_000)),
  ]),
  byVariation(
    'tv-subscription',
    'startimes',
    'Startimes Subscription',
    [
      v('nova', 'Nova - 1900 Naira - 1 Month', naira(1_900)),
      v('basic', 'Basic - 3700 Naira - 1 Month', naira(3_700)),
      v('smart', 'Smart - 4700 Naira - 1 Month', naira(4_700)),
      v('classic', 'Classic - 5500 Naira - 1 Month', naira(5_500)),
      v('super', 'Super - 9000 Naira - 1 Month', naira(9_000)),
      v('nova-weekly', 'Nova - 600 Naira - 1 Week', naira(600)),
      v('basic-weekly', 'Basic - 1250 Naira - 1 Week', naira(1_250)),
      v('smart-weekly', 'Smart - 1550 Naira - 1 Week', naira(1_550)),
      v('classic-weekly', 'Classic - 1900 Naira - 1 Week', naira(1_900)),
      v('super-weekly', 'Super - 3000 Naira - 1 Week', naira(3_000)),
    ],
    'varations',
  ),
  byVariation('tv-subscription', 'showmax', 'ShowMax', [
    v('full', 'Showmax Full - N8,400', naira(8_400)),
    v('mobile_only', 'Showmax Mobile Only - N3,500', naira(3_500)),
    v('sports_full', 'Showmax Pro (Premier League) Full - N12,500', naira(12_500)),
    v('sports_mobile_only', 'Showmax Pro (Premier League) Mobile - N6,300', naira(6_300)),
  ]),

  electricity('ikeja-electric', 'Ikeja Electric Payment - IKEDC'),
  electricity('eko-electric', 'Eko Electric Payment - EKEDC'),
  electricity('abuja-electric', 'Abuja Electricity Distribution Company - AEDC'),
  electricity('kano-electric', 'KEDCO - Kano Electric'),
  electricity('portharcourt-electric', 'PHED - Port Harcourt Electric'),
  electricity('jos-electric', 'Jos Electric - JED'),
  electricity('kaduna-electric', 'Kaduna Electric - KAEDCO'),
  electricity('enugu-electric', 'Enugu Electric - EEDC'),
  electricity('ibadan-electric', 'IBEDC - Ibadan Electricity Distribution Company'),
  electricity('benin-electric', 'Benin Electricity - BEDC'),
  electricity('aba-electric', 'Aba Electric Payment - ABEDC'),
  electricity('yola-electric', 'Yola Electric Disco Payment - YEDC'),

  byVariation(
    'education',
    'waec',
    'WAEC Result Checker PIN',
    [v('waecdirect', 'WASSCE Result Checker PIN', naira(3_900))],
    'varations',
  ),
  byVariation(
    'education',
    'waec-registration',
    'WAEC Registration PIN',
    [v('waec-registration', 'WASSCE for Private Candidates - Second Series', naira(18_950))],
    'varations',
  ),
  byVariation(
    'education',
    'neco',
    'NECO Result Checker Token',
    [v('neco-result', 'NECO Result Checker Token', naira(1_300))],
    'varations',
  ),
  byVariation(
    'education',
    'nabteb',
    'NABTEB Result Checker PIN',
    [v('nabteb-result', 'NABTEB Result Checker PIN', naira(1_000))],
    'varations',
  ),
  byVariation(
    'education',
    'jamb',
    'JAMB PIN VENDING (UTME & Direct Entry)',
    [v('utme', 'UTME PIN (without mock)', naira(6_200)), v('de', 'Direct Entry (DE)', naira(6_200))],
    'varations',
  ),

  betting('bet9ja', 'Bet9ja'),
  betting('sportybet', 'SportyBet'),
  betting('betking', 'BetKing'),
  betting('1xbet', '1xBet'),
  betting('nairabet', 'NairaBet'),
  betting('msport', 'MSport'),
  betting('betway', 'Betway'),
  betting('bangbet', 'BangBet'),
  betting('merrybet', 'MerryBet'),
  betting('betland', 'BetLand'),
  betting('livescorebet', 'LiveScore Bet'),
  betting('naijabet', 'NaijaBet'),
];

export const billsServiceById: ReadonlyMap<string, BillsService> = new Map(
  billsServices.map((service) => [service.serviceID, service]),
);

/** Kobo as VTpass writes naira: "1234.56". */
export function nairaText(kobo: bigint): string {
  const abs = kobo < 0n ? -kobo : kobo;
  return `${kobo < 0n ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}
