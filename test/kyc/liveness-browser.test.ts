import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { createDojahKycProvider } from '../../src/providers/kyc/dojah-client.ts';
import { SANDBOX_KYC_APP_ID, SANDBOX_KYC_SECRET } from '../../src/sandbox/state.ts';
import { createWorld, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';

// The sandbox liveness page (GET /__sandbox/liveness) in headless Chromium: it plays the KYC
// provider's widget, gets a token from the sandbox provider and submits it to the service with the
// user's access token, as a client app would. The test then asks the service what it decided.

const chromiumPath = '/usr/bin/chromium';
const haveChromium = existsSync(chromiumPath);

type KycStatus = { tier: number; tiers: Array<{ tier: number; status: string; reason?: string }> };

describe('sandbox liveness page', {
  skip: haveChromium ? false : `chromium not installed: apt-get install chromium`,
}, () => {
  let world: World;
  let browser: Browser;

  before(async () => {
    world = await createWorld();
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  async function userWithProfile(firstName: string, lastName: string): Promise<SignedIn> {
    const user = await signIn(world);
    ok(await post(world, 'updateProfile', { firstName, lastName }, { token: user.accessToken }));
    return user;
  }

  /** Opens the page with the token in the fragment, clicks a button, and waits for the outcome. */
  async function walk(page: Page, accessToken: string, button: '#pass' | '#fail') {
    await page.goto(`${world.baseUrl}/__sandbox/liveness#accessToken=${encodeURIComponent(accessToken)}`);
    assert.equal(await page.inputValue('#accessToken'), accessToken, 'the field holds the fragment’s token');
    await page.click(button);
    // The page marks #result with data-state once it is done (approved, rejected or error).
    await page.waitForSelector('#result[data-state]:not([data-state="working"])');
    return {
      state: await page.getAttribute('#result', 'data-state'),
      result: (await page.textContent('#result')) ?? '',
      token: (await page.textContent('#token')) ?? '',
    };
  }

  const kycStatus = async (user: SignedIn) =>
    ok(await get<KycStatus>(world, 'getKycStatus', {}, { token: user.accessToken }));

  /** The provider's answer to a token the page showed: the service has used it up already. */
  const verifyAgain = (token: string) =>
    createDojahKycProvider({
      baseUrl: `${world.baseUrl}/__sandbox/kyc`,
      appId: SANDBOX_KYC_APP_ID,
      secretKey: SANDBOX_KYC_SECRET,
      timeoutMs: 2000,
    }).verifyLiveness(token);

  it('"Complete liveness check" approves Tier 1', async () => {
    const user = await userWithProfile('Ada', 'Obi');
    assert.equal((await kycStatus(user)).tier, 0);
    const page = await browser.newPage({ viewport: { width: 640, height: 760 } });
    let token: string;
    try {
      const outcome = await walk(page, user.accessToken, '#pass');
      await page.screenshot({ path: '/tmp/liveness.png', fullPage: true });
      assert.equal(outcome.result, 'Tier 1 approved');
      assert.equal(outcome.state, 'approved');
      assert.match(outcome.token, /^liv_[0-9a-f]{32}$/);
      token = outcome.token;
      // The access token does not stay in the address bar (nor in the history).
      assert.equal(new URL(page.url()).hash, '');
    } finally {
      await page.close();
    }
    const status = await kycStatus(user);
    assert.equal(status.tier, 1);
    assert.equal(status.tiers[0]?.tier, 1);
    assert.equal(status.tiers[0]?.status, 'approved');
    assert.deepEqual(await verifyAgain(token), { status: 'unknown_token' }, 'the service used the token');
  });

  it('"Fail liveness check" rejects Tier 1 with the provider’s reason', async () => {
    const user = await userWithProfile('Chidi', 'Okeke');
    const page = await browser.newPage();
    let token: string;
    try {
      const outcome = await walk(page, user.accessToken, '#fail');
      assert.equal(outcome.state, 'rejected');
      assert.match(outcome.result, /^Tier 1 rejected: .+/);
      token = outcome.token;
    } finally {
      await page.close();
    }
    const status = await kycStatus(user);
    assert.equal(status.tier, 0);
    assert.equal(status.tiers[0]?.tier, 1);
    assert.equal(status.tiers[0]?.status, 'rejected');
    assert.ok((status.tiers[0]?.reason ?? '').length > 0, 'a rejection says why');
    // The page's token reached the service, which verified it: it is used up at the provider.
    assert.deepEqual(await verifyAgain(token), { status: 'unknown_token' });
  });

  it('shows the service’s error when the access token is wrong, and changes nothing', async () => {
    const user = await userWithProfile('Ngozi', 'Eze');
    const page = await browser.newPage();
    try {
      await page.goto(`${world.baseUrl}/__sandbox/liveness`);
      await page.fill('#accessToken', 'not-a-valid-access-token');
      await page.click('#pass');
      await page.waitForSelector('#result[data-state]:not([data-state="working"])');
      assert.equal(await page.getAttribute('#result', 'data-state'), 'error');
      const text = (await page.textContent('#result')) ?? '';
      assert.ok(text.length > 0 && !/approved|rejected/.test(text), text);
    } finally {
      await page.close();
    }
    assert.equal((await kycStatus(user)).tiers[0]?.status, 'none');
  });
});
