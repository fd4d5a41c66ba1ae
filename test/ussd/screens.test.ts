import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sandboxDataPlans } from '../../src/sandbox/vtu/data-catalogue.ts';
import type { Network } from '../../src/shared/networks.ts';
import { fitsScreen, gsmSeptets, screenSeptetsMax, toGsm } from '../../src/ussd/gsm.ts';
import { planLabel } from '../../src/ussd/loaders.ts';
import {
  airtimeBounds,
  type MenuLoaders,
  type MenuPlan,
  ownNetwork,
  plansPerScreen,
  runMenu,
} from '../../src/ussd/menu.ts';
import { airtimeWhat, dataWhat, nairaText, screens } from '../../src/ussd/screens.ts';

// Every screen the USSD menu can show fits one screen of 160 GSM 7-bit characters (API.md 17.6): one
// character outside the alphabet (₦, an accented letter) would switch the screen to UCS-2 and cut it
// at 80. The menu is walked from the first screen through every input that moves it, with the longest
// values it can meet: the sandbox catalogue's plans at prices of five digits and kobo, 11-digit
// numbers, the largest amounts, and every refusal and answer a payment can give.

const network: Record<string, Network> = { MTN: 'mtn', GLO: 'glo', AIRTEL: 'airtel', '9MOBILE': '9mobile' };

/** The sandbox's plans, labelled as the menu labels them, priced high (N19,999.99) to take the most room. */
const plansByNetwork = new Map<Network, MenuPlan[]>();
for (const plan of sandboxDataPlans()) {
  const own = network[plan.network]!;
  const label = planLabel({
    name: plan.plan,
    planType: plan.planType,
    validity: plan.validity,
    network: own,
  });
  plansByNetwork.set(own, [
    ...(plansByNetwork.get(own) ?? []),
    { planId: String(plan.id), label, priceKobo: 1_999_999n },
  ]);
}

const longestLine = 'x'.repeat(48);
const loaders: MenuLoaders = {
  balanceKobo: async () => 99_999_999_999_999n,
  lastTransactionLines: async () => [longestLine, longestLine, longestLine],
  dataPlans: async (n) => plansByNetwork.get(n) ?? [],
};
const caller = { phone: '+2348031234567', networkCode: '62130' };
const bounds = airtimeBounds(5_000_000n);

/** Inputs tried at every place: menu choices, back, numbers of each network, amounts, a PIN, rubbish. */
const tried = [
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '9',
  '*',
  '08031234567',
  '09091234567',
  '08021234567',
  '08051234567',
  '12345',
  '50',
  '50000',
  '49',
  '50001',
  '1234',
];

function assertFits(text: string, where: string): void {
  const septets = gsmSeptets(text);
  assert.ok(septets !== null, `${where}: a character outside GSM 7-bit in ${JSON.stringify(text)}`);
  assert.ok(
    septets <= screenSeptetsMax,
    `${where}: ${septets} septets > ${screenSeptetsMax}: ${JSON.stringify(text)}`,
  );
}

describe('every USSD screen fits 160 GSM 7-bit characters', () => {
  it('counts the alphabet as GSM 03.38 does: the extension table twice, ₦ and accents not at all', () => {
    assert.equal(gsmSeptets('N1,500'), 6);
    assert.equal(gsmSeptets('[€]'), 6);
    assert.equal(gsmSeptets('₦1,500'), null);
    assert.equal(gsmSeptets('Ọlá'), null);
    assert.equal(toGsm('₦1,500 for Ọlá – “x”'), 'N1,500 for Ola - "x"');
    assert.ok(fitsScreen('a'.repeat(160)));
    assert.ok(!fitsScreen('a'.repeat(161)));
    assert.ok(!fitsScreen(`${'a'.repeat(159)}€`));
  });

  it('walks the menu through every input that moves it', async () => {
    const seen = new Map<string, string[]>();
    let frontier: string[][] = [[]];
    let walked = 0;
    while (frontier.length > 0) {
      const next: string[][] = [];
      for (const inputs of frontier) {
        const outcome = await runMenu(inputs, caller, loaders, bounds);
        walked++;
        if (outcome.kind === 'pay') {
          assertFits(
            screens.processing(outcome.payment.what, `202611291533U${'f'.repeat(30)}`).text,
            inputs.join('*'),
          );
          continue;
        }
        const { screen } = outcome;
        assertFits(screen.text, inputs.join('*') || '(first)');
        if (seen.has(`${screen.type} ${screen.text}`)) continue;
        seen.set(`${screen.type} ${screen.text}`, inputs);
        if (screen.type === 'CON') for (const input of tried) next.push([...inputs, input]);
      }
      frontier = next;
    }
    const texts = [...seen.keys()];
    // The walk reached each kind of place, every page of every network's plans among them.
    for (const expected of [
      /^CON billrail\n1 Balance/,
      /^END Your billrail balance is N999,999,999,999\.99\.$/,
      /^END Last 3:/,
      /^CON Airtime for:/,
      /^CON Enter the phone number/,
      /^CON That is not a Nigerian mobile number/,
      /^CON Network of 08031234567:/,
      /^END 08031234567 is not on 9mobile\./,
      /^CON Enter the amount in naira, N50 to N50,000:$/,
      /^CON Enter a whole amount/,
      /^CON N50,000 MTN airtime to 08031234567\.\nEnter PIN to pay, 0 to cancel$/,
      /^CON A PIN is 4 digits/,
      /^END Cancelled/,
      /^CON Data network:/,
      /^CON 9mobile data:\n/,
      /^CON Data for:/,
      /^CON Invalid choice\./,
    ]) {
      assert.ok(
        texts.some((text) => expected.test(text)),
        `the walk reached ${expected}`,
      );
    }
    for (const [n, plans] of plansByNetwork) {
      const pages = Math.ceil(plans.length / plansPerScreen);
      const shown = texts.filter((text) =>
        text.startsWith(`CON ${screens.plans(n, [], false).text.split('\n')[0]}`),
      );
      assert.ok(
        shown.length >= pages,
        `${n}: every page of ${plans.length} plans was shown (${shown.length})`,
      );
    }
    assert.ok(walked > 500, `walked ${walked} steps`);
  });

  it('fits the longest values of every answer a payment or a refusal can give', () => {
    const maxKobo = 100_000_000_000n;
    const reference = `202611291533U${'f'.repeat(30)}`;
    const longestPlan = 'x'.repeat(16);
    const whats = [
      airtimeWhat(5_000_000n, '9mobile', '+2349091234567'),
      airtimeWhat(4_999_999n, 'airtel', '+2348021234567'),
      dataWhat(longestPlan, 1_999_999n, '+2349091234567'),
    ];
    const all = [
      screens.main(),
      screens.unknownNumber(),
      screens.ussdOff(),
      screens.tierRequired(),
      screens.pinNotSet(),
      screens.frozen(),
      screens.malformed(),
      screens.tooMany(),
      screens.balance(-maxKobo),
      screens.lastTransactions([]),
      screens.ownNetworkUnknown(),
      screens.noPlans('9mobile'),
      screens.plansNotReady(),
      screens.wrongPin(4),
      screens.pinLocked(1440),
      screens.singleMax(maxKobo),
      screens.ussdDailyMax(maxKobo),
      screens.accountDailyLimit(maxKobo),
      screens.insufficientFunds(),
      screens.paused(),
      screens.priceChanged(),
      screens.prefixMismatch(),
      screens.refused(),
      screens.unavailable(),
      screens.stillWorking(),
      screens.networkMismatch('+2349091234567', '9mobile'),
      ...whats.flatMap((what) => [
        screens.confirm(what),
        screens.pinShape(what),
        screens.processing(what, reference),
      ]),
    ];
    for (const screen of all) assertFits(screen.text, screen.text.slice(0, 30));
  });

  it('writes naira as N1,500 and N1,500.50, and labels plans without their network', () => {
    assert.equal(nairaText(150_000n), 'N1,500');
    assert.equal(nairaText(150_050n), 'N1,500.50');
    assert.equal(nairaText(5n), 'N0.05');
    assert.equal(
      planLabel({ name: 'MTN 1.0GB', planType: 'CORPORATE GIFTING', validity: '30 days', network: 'mtn' }),
      '1GB CG 30d',
    );
    assert.equal(
      ownNetwork({ phone: '+2348031234567', networkCode: '62120' }),
      'airtel',
      'the gateway says first',
    );
    assert.equal(ownNetwork({ phone: '+2348031234567', networkCode: null }), 'mtn', 'then the prefix');
    assert.equal(ownNetwork({ phone: '+2348041234567', networkCode: null }), null);
  });
});
