import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import type { Browser, Page } from 'playwright-core';
import { ussdCallbackPrefix } from '../../src/http/ussd-callback-route.ts';
import { loadSandboxEnv } from '../../src/sandbox/env.ts';
import {
  buildStandaloneSandbox,
  type StandaloneSandbox,
  serviceUssdCallbackPath,
} from '../../src/sandbox/server.ts';
import {
  type Handler,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';
import { createWorld, ok, post, type World } from '../helpers/world.ts';
import { buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import { assertAccessible, launchChromium, phonePage, skipWithoutChromium } from '../web/support.ts';

// The sandbox's USSD gateway and feature phone (API.md 17.6): POST /__sandbox/ussd relays one step
// of a session to the service's callback exactly as Africa's Talking posts it (a form of sessionId,
// serviceCode, phoneNumber in E.164, networkCode from the number's prefix and text), and returns the
// gateway's view of the answer, {type, screen}. The callback here is a scripted server, so every
// answer the service could give (CON, END, a 404, a 500, neither) is shown; what the gateway cannot
// make of it comes back as the real gateway's "Connection problem or invalid MMI code" with why.

const logger = pino({ level: 'silent' });
const token = 'test-ussd-callback-token-0123456789';

type Envelope = {
  success: boolean;
  data?: { type: string; screen: string };
  error?: { code: string; message: string };
};

function sandboxFor(serviceUrl: string, extra: Record<string, string> = {}): StandaloneSandbox {
  const env = loadSandboxEnv({
    PORT: '4010',
    SERVICE_URL: serviceUrl,
    SANDBOX_CLOCK_TOKEN: 'a-clock-token-of-sixteen-or-more',
    ...extra,
  });
  return buildStandaloneSandbox(env, logger);
}

async function dial(
  sandbox: StandaloneSandbox,
  body: Record<string, unknown>,
): Promise<{ status: number; body: Envelope }> {
  const response = await sandbox.app.inject({ method: 'POST', url: '/__sandbox/ussd', payload: body });
  return { status: response.statusCode, body: response.json() as Envelope };
}

describe('the sandbox USSD gateway', () => {
  const received: Received[] = [];
  let answer: Handler = raw(200, 'CON Welcome', 'text/plain');
  let callback: ScriptedServer;
  let sandbox: StandaloneSandbox;

  before(async () => {
    callback = await startScriptedServer(
      (request, body, response) => answer(request, body, response),
      received,
    );
    sandbox = sandboxFor(callback.baseUrl, { USSD_CALLBACK_TOKEN: token });
    await sandbox.app.ready();
  });
  after(async () => {
    await sandbox.app.close();
    await callback.close();
  });
  beforeEach(() => {
    received.length = 0;
    answer = raw(200, 'CON Welcome', 'text/plain');
  });

  it("posts the gateway's form to the callback, token in the path, and reads a CON screen", async () => {
    answer = raw(200, 'CON Welcome to billrail\n1 Balance\n2 Airtime', 'text/plain');
    const step = await dial(sandbox, { phone: '08031234567', sessionId: 'ATUid_abc123', text: '' });
    assert.equal(step.status, 200);
    assert.deepEqual(step.body, {
      success: true,
      data: { type: 'CON', screen: 'Welcome to billrail\n1 Balance\n2 Airtime' },
    });
    assert.equal(received.length, 1);
    const [sent] = received;
    assert.equal(sent!.method, 'POST');
    assert.equal(sent!.url, `/api/public/ussd/${token}`);
    assert.equal(sent!.headers['content-type'], 'application/x-www-form-urlencoded');
    // Exactly the five fields Africa's Talking sends, in its order, the number in E.164.
    assert.deepEqual(
      [...new URLSearchParams(sent!.body)],
      [
        ['sessionId', 'ATUid_abc123'],
        ['serviceCode', '*384*2255#'],
        ['phoneNumber', '+2348031234567'],
        ['networkCode', '62130'],
        ['text', ''],
      ],
    );
  });

  it('sends every input so far as text, and reads an END screen as the last', async () => {
    answer = raw(200, 'END Processing N100 airtime. Ref ussd_1', 'text/plain');
    const step = await dial(sandbox, {
      phone: '+2348031234567',
      sessionId: 'ATUid_abc123',
      text: '2*1*100*2580',
    });
    assert.deepEqual(step.body, {
      success: true,
      data: { type: 'END', screen: 'Processing N100 airtime. Ref ussd_1' },
    });
    assert.equal(new URLSearchParams(received[0]!.body).get('text'), '2*1*100*2580');
  });

  it('names the network by the number’s prefix, in every form of the number', async () => {
    const cases: Array<[phone: string, networkCode: string]> = [
      ['08031234567', '62130'], // MTN
      ['2347025123456', '62130'], // MTN's 07025 block inside Smile's 0702
      ['08021234567', '62120'], // Airtel
      ['+2349011234567', '62120'], // Airtel
      ['08051234567', '62150'], // Glo
      ['09151234567', '62150'], // Glo
      ['08091234567', '62160'], // 9mobile
      ['09081234567', '62160'], // 9mobile
    ];
    for (const [phone, networkCode] of cases) {
      received.length = 0;
      const step = await dial(sandbox, { phone, sessionId: 'ATUid_net', text: '' });
      assert.equal(step.status, 200, phone);
      const form = new URLSearchParams(received[0]!.body);
      assert.equal(form.get('networkCode'), networkCode, phone);
      assert.match(form.get('phoneNumber') ?? '', /^\+234\d{10}$/, phone);
    }
  });

  it('sends the configured service code', async () => {
    const other = sandboxFor(callback.baseUrl, { USSD_CALLBACK_TOKEN: token, USSD_SERVICE_CODE: '*347*88#' });
    try {
      const step = await other.app.inject({
        method: 'POST',
        url: '/__sandbox/ussd',
        payload: { phone: '08031234567', sessionId: 'ATUid_code', text: '' },
      });
      assert.equal(step.statusCode, 200);
      assert.equal(new URLSearchParams(received[0]!.body).get('serviceCode'), '*347*88#');
    } finally {
      await other.app.close();
    }
  });

  it('refuses what a handset could not send, before calling the service', async () => {
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [{ phone: '08031234567', sessionId: 'ATUid_x', text: '1*abc' }, /keypad/],
      [{ phone: '08031234567', text: '' }, /sessionId/],
      [{ phone: '08031234567', sessionId: 'has spaces', text: '' }, /sessionId/],
      [{ phone: '08031234567', sessionId: 'ATUid_x', text: '1'.repeat(183) }, /182/],
      [{ phone: '12345', sessionId: 'ATUid_x', text: '' }, /Nigerian mobile number/],
      // ntel's 0804: a Nigerian number, but not on a network the gateway reaches.
      [{ phone: '08041234567', sessionId: 'ATUid_x', text: '' }, /MTN, Airtel, Glo and 9mobile/],
      [{ phone: '08031234567', sessionId: 'ATUid_x', text: '', extra: 1 }, /required/],
    ];
    for (const [body, message] of refused) {
      const step = await dial(sandbox, body);
      assert.equal(step.status, 400, JSON.stringify(body));
      assert.equal(step.body.error?.code, 'VALIDATION_ERROR');
      assert.match(step.body.error?.message ?? '', message, JSON.stringify(body));
    }
    assert.equal(received.length, 0, 'nothing reached the service');
  });

  it('says "Connection problem or invalid MMI code", and why, for what the gateway cannot use', async () => {
    const problems: Array<[Handler, RegExp]> = [
      [raw(404, '{"success":false}'), /answered 404 .*USSD_CALLBACK_TOKEN/],
      [raw(500, 'oops', 'text/plain'), /answered HTTP 500/],
      [raw(302, '', 'text/plain'), /answered HTTP 302/],
      [raw(200, 'Welcome', 'text/plain'), /neither "CON \.\.\." nor "END \.\.\."/],
      [raw(200, 'con lower case', 'text/plain'), /neither/],
      [raw(200, `CON ${'x'.repeat(5_000)}`, 'text/plain'), /longer than 4096 bytes/],
    ];
    for (const [handler, why] of problems) {
      answer = handler;
      const step = await dial(sandbox, { phone: '08031234567', sessionId: 'ATUid_bad', text: '' });
      assert.equal(step.status, 502);
      assert.equal(step.body.error?.code, 'UPSTREAM_UNAVAILABLE');
      assert.match(step.body.error?.message ?? '', /^Connection problem or invalid MMI code: /);
      assert.match(step.body.error?.message ?? '', why);
    }
  });

  it('says so when the service cannot be reached', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const closed = sandboxFor(`http://127.0.0.1:${port}`, { USSD_CALLBACK_TOKEN: token });
    try {
      const step = await closed.app.inject({
        method: 'POST',
        url: '/__sandbox/ussd',
        payload: { phone: '08031234567', sessionId: 'ATUid_down', text: '' },
      });
      assert.equal(step.statusCode, 502);
      assert.match(step.json().error.message, /could not be reached/);
    } finally {
      await closed.app.close();
    }
  });

  it('says what to set when a standalone sandbox was not told the callback token', async () => {
    const untold = sandboxFor(callback.baseUrl);
    try {
      const step = await untold.app.inject({
        method: 'POST',
        url: '/__sandbox/ussd',
        payload: { phone: '08031234567', sessionId: 'ATUid_untold', text: '' },
      });
      assert.equal(step.statusCode, 502);
      assert.match(step.json().error.message, /USSD_CALLBACK_TOKEN/);
      assert.equal(received.length, 0);
    } finally {
      await untold.app.close();
    }
  });

  it('refuses a malformed USSD_CALLBACK_TOKEN or service code at start-up, naming it', () => {
    assert.throws(
      () => sandboxFor(callback.baseUrl, { USSD_CALLBACK_TOKEN: 'short' }),
      /USSD_CALLBACK_TOKEN/,
    );
    assert.throws(() => sandboxFor(callback.baseUrl, { USSD_SERVICE_CODE: '384' }), /USSD_SERVICE_CODE/);
  });

  it('serves the feature phone page under a policy that runs only its own script', async () => {
    const page = await sandbox.app.inject({ method: 'GET', url: '/__sandbox/ussd?phone=08031234567' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const policy = String(page.headers['content-security-policy']);
    const script = /<script>([\s\S]*)<\/script>/.exec(page.body)?.[1];
    assert.ok(script !== undefined, 'the page has its script inline');
    const hash = createHash('sha256').update(script).digest('base64');
    assert.match(policy, new RegExp(`script-src 'sha256-${hash.replace(/[+/=]/g, '\\$&')}'`));
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /connect-src 'self'/);
    assert.match(page.body, /data-service-code="\*384\*2255#"/);
    for (const key of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#']) {
      assert.ok(page.body.includes(`data-key="${key}"`), `key ${key}`);
    }
    assert.match(page.body, /id="screen" role="status" aria-live="polite"/);
  });
});

describe('the sandbox feature phone page', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  const received: Received[] = [];
  let callback: ScriptedServer;
  let sandbox: StandaloneSandbox;
  let browser: Browser;
  let page: Page;
  let phoneUrl: string;

  /** A menu two screens deep, as a service's could be: what each text gets. */
  const menu: Handler = (_request, body, response) => {
    const text = new URLSearchParams(body).get('text');
    const screens: Record<string, string> = {
      '': 'CON Welcome\n1 Balance\n2 Airtime',
      '2': 'CON Airtime for\n1 This phone\n2 Another phone',
      '2*1': 'CON Amount (N)',
      '2*1*100': 'END Done. Ref ussd_test_1',
    };
    response
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(screens[text ?? ''] ?? 'END Invalid choice');
  };

  before(async () => {
    callback = await startScriptedServer(menu, received);
    sandbox = sandboxFor(callback.baseUrl, { USSD_CALLBACK_TOKEN: token });
    const address = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
    phoneUrl = `${address}/__sandbox/ussd?phone=08091234567`;
    browser = await launchChromium();
    page = await phonePage(browser);
  });
  after(async () => {
    await browser?.close();
    await sandbox.app.close();
    await callback.close();
  });
  beforeEach(() => {
    received.length = 0;
  });

  const screenText = async () => {
    await page.locator('#screen[data-state]:not([data-state="busy"])').waitFor();
    return (await page.getByRole('status', { name: 'Phone screen' }).textContent()) ?? '';
  };
  const key = (label: string) =>
    page.getByRole('group', { name: 'Keypad' }).getByRole('button', { name: label, exact: true });
  async function send(keys: string): Promise<string> {
    for (const typed of keys) await key(typed).click();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    return screenText();
  }
  const texts = () => received.map((r) => new URLSearchParams(r.body).get('text'));

  it('dials the service code, sends every input so far joined by *, and ends on END', async () => {
    await page.goto(phoneUrl);
    assert.equal(await page.getByLabel('Phone dialling').inputValue(), '08091234567', 'from ?phone=');
    assert.match(await screenText(), /Dial \*384\*2255# and press Send/);
    await assertAccessible(page, 'the feature phone');

    assert.match(await send('*384*2255#'), /1 Balance/);
    assert.ok(
      await page.getByLabel('Phone dialling').isDisabled(),
      'the dialling number is fixed for the session',
    );
    assert.match(await send('2'), /1 This phone/);
    assert.match(await send('1'), /Amount/);
    // Typed on the computer's keyboard, and Enter, as well as on the keypad.
    await page.getByLabel('Typed on the keypad').fill('100');
    await page.getByLabel('Typed on the keypad').press('Enter');
    assert.equal(await screenText(), 'Done. Ref ussd_test_1');
    assert.equal(await page.locator('#screen').getAttribute('data-state'), 'end');
    await assertAccessible(page, 'the feature phone, at the end');

    assert.deepEqual(texts(), ['', '2', '2*1', '2*1*100']);
    const forms = received.map((r) => new URLSearchParams(r.body));
    assert.equal(new Set(forms.map((f) => f.get('sessionId'))).size, 1, 'one session throughout');
    assert.match(forms[0]!.get('sessionId') ?? '', /^ATUid_[0-9a-f]{32}$/);
    assert.equal(forms[0]!.get('phoneNumber'), '+2348091234567');
    assert.equal(forms[0]!.get('networkCode'), '62160', '9mobile');

    // After END the next Send is a new dial, with a new session.
    received.length = 0;
    assert.match(await send('*384*2255#'), /Welcome/);
    assert.deepEqual(texts(), ['']);
    assert.notEqual(new URLSearchParams(received[0]!.body).get('sessionId'), forms[0]!.get('sessionId'));
  });

  it('ends the session on Cancel, and never dials another code', async () => {
    await page.goto(phoneUrl);
    await send('*384*2255#');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    assert.equal(await screenText(), 'Session ended.');
    assert.equal(await page.getByLabel('Phone dialling').isDisabled(), false);
    // A Send after Cancel is not an input of the old session: "2" alone is not a code to dial.
    assert.equal(await send('2'), 'Connection problem or invalid MMI code');
    assert.equal(await send('*123#'), 'Connection problem or invalid MMI code');
    assert.deepEqual(texts(), [''], 'only the dial reached the service');
  });

  it("shows the gateway's connection problem, with why, and ends the session", async () => {
    await page.goto(`${phoneUrl.split('?')[0]}?phone=08041234567`);
    assert.match(await send('*384*2255#'), /MTN, Airtel, Glo and 9mobile/);
    assert.equal(await page.locator('#screen').getAttribute('data-state'), 'error');
    assert.deepEqual(texts(), []);
  });
});

describe("the sandbox USSD gateway, through the service's own callback", () => {
  let world: World;

  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('dials the service in process: its path is the route the service serves', () => {
    assert.equal(`${serviceUssdCallbackPath}/`, ussdCallbackPrefix);
  });

  it("reaches the service's menu, and its END for a number it does not know", async () => {
    const stranger = await fetch(`${world.baseUrl}/__sandbox/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone: mtn('7'), sessionId: 'ATUid_stranger', text: '' }),
    });
    const refused = (await stranger.json()) as Envelope;
    assert.equal(refused.data?.type, 'END');
    assert.match(refused.data?.screen ?? '', /no billrail account/);

    const user = await buyer(world, 1_000);
    ok(await post(world, 'setUssdEnabled', { enabled: true, pin: PIN }, { token: user.accessToken }));
    const dialled = await fetch(`${world.baseUrl}/__sandbox/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone: user.phone, sessionId: 'ATUid_member', text: '1' }),
    });
    const balance = (await dialled.json()) as Envelope;
    assert.deepEqual(balance.data, { type: 'END', screen: 'Your billrail balance is N1,000.' });
  });
});
