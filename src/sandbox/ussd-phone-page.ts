import type { FastifyInstance } from 'fastify';
import { scriptedPagePolicy } from './page-policy.ts';

// GET /__sandbox/ussd: a feature phone in a page, for trying the service's USSD menu (API.md 17.6)
// with no setup through the API. It keeps the session as a handset and the gateway do between them:
// typing the service code and Send dials (a new sessionId, text ''); each later Send adds what was
// typed to the inputs, and every step posts all of them joined by '*' to POST /__sandbox/ussd, which
// calls the service's callback exactly as the gateway does. A CON screen waits for the next input;
// an END screen, an error or Cancel ends the session. The dialling number is the field at the top
// (`?phone=` fills it), and is what the gateway sends as phoneNumber.
//
// As the other sandbox pages (liveness-page.ts), only its own inline style and script run (by hash)
// and it talks only to its own origin; the service code reaches the script in an attribute.

const style = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; padding: 1rem; background: #e4e7eb; color: #1f2933; }
  main { max-width: 20rem; margin: 0 auto; }
  h1 { font-size: 1.2rem; margin: 0 0 .25rem; }
  .note { color: #3e4c59; margin: 0 0 .75rem; font-size: .9rem; }
  label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
  input { width: 100%; box-sizing: border-box; padding: .45rem; font: inherit; border: 1px solid #7b8794; border-radius: 6px; }
  .handset { background: #1f2328; border-radius: 28px 28px 40px 40px; padding: 1.25rem 1rem 1.5rem; margin-top: 1rem; }
  .speaker { width: 3rem; height: .3rem; border-radius: 1rem; background: #52575e; margin: 0 auto .9rem; }
  #screen { margin: 0; min-height: 9.5rem; padding: .6rem .7rem; border-radius: 6px; border: 4px solid #3d4348;
    background: #b9c79b; color: #17200f; font: 15px/1.35 ui-monospace, 'DejaVu Sans Mono', monospace;
    white-space: pre-wrap; overflow-wrap: anywhere; }
  #screen[data-state="error"] { font-weight: 700; }
  .handset label { color: #f5f7fa; font-weight: 600; font-size: .85rem; }
  #entry { background: #f5f7fa; font-family: ui-monospace, monospace; letter-spacing: .08em; }
  .calls { display: grid; grid-template-columns: 1fr 1fr; gap: .6rem; margin: .8rem 0; }
  .keys { display: grid; grid-template-columns: repeat(3, 1fr); gap: .5rem; }
  button { font: inherit; font-weight: 700; border: 0; border-radius: 14px; padding: .55rem 0; cursor: pointer; }
  button:disabled { opacity: .6; cursor: wait; }
  button:focus-visible { outline: 3px solid #f0b429; outline-offset: 2px; }
  .keys button { background: #3b4046; color: #f5f7fa; font-size: 1.25rem; line-height: 1.1; }
  .keys button small { display: block; font-size: .6rem; font-weight: 600; color: #d9dde2; letter-spacing: .1em; }
  #send { background: #1f7a33; color: #fff; }
  #cancel { background: #b42318; color: #fff; }
`;

const script = `
  const serviceCode = document.body.dataset.serviceCode;
  const screen = document.getElementById('screen');
  const phone = document.getElementById('phone');
  const entry = document.getElementById('entry');
  const buttons = document.querySelectorAll('button');
  const idleScreen = 'Dial ' + serviceCode + ' and press Send.';

  phone.value = new URLSearchParams(location.search).get('phone') ?? '';

  /** The session under way: the gateway's id for it and every input typed since the dial. */
  let session = null;

  function show(state, text) {
    screen.dataset.state = state;
    screen.textContent = text;
  }

  function end(state, text) {
    session = null;
    phone.disabled = false;
    show(state, text);
  }

  function busy(on) {
    for (const button of buttons) button.disabled = on;
    entry.disabled = on;
  }

  // Africa's Talking's ids look like ATUid_<hex>; crypto.getRandomValues works on any origin.
  function newSessionId() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return 'ATUid_' + [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  async function step(text) {
    busy(true);
    show('busy', 'USSD code running...');
    try {
      const response = await fetch('/__sandbox/ussd', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phone: phone.value.trim(), sessionId: session.id, text }),
      });
      let answer = null;
      try { answer = await response.json(); } catch { answer = null; }
      if (answer?.success !== true) {
        end('error', answer?.error?.message ?? 'Connection problem or invalid MMI code');
      } else if (answer.data.type === 'END') {
        end('end', answer.data.screen);
      } else {
        show('con', answer.data.screen);
      }
    } catch {
      end('error', 'Connection problem or invalid MMI code');
    } finally {
      busy(false);
      entry.focus();
    }
  }

  async function send() {
    const typed = entry.value.trim();
    entry.value = '';
    if (session === null) {
      if (typed === '') return;
      // A handset dials only what the network knows; anything else never reaches the gateway.
      if (typed !== serviceCode) return end('error', 'Connection problem or invalid MMI code');
      session = { id: newSessionId(), inputs: [] };
      phone.disabled = true;
      return step('');
    }
    session.inputs.push(typed);
    return step(session.inputs.join('*'));
  }

  document.getElementById('keypad').addEventListener('submit', (event) => {
    event.preventDefault();
    void send();
  });
  document.getElementById('cancel').addEventListener('click', () => {
    entry.value = '';
    if (session !== null) end('idle', 'Session ended.');
    else show('idle', idleScreen);
  });
  for (const key of document.querySelectorAll('[data-key]')) {
    key.addEventListener('click', () => {
      entry.value += key.dataset.key;
      entry.focus();
    });
  }
  show('idle', idleScreen);
`;

const escapeAttribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The keypad's keys with the letters a handset prints under them (decoration only). */
const keys: ReadonlyArray<[key: string, letters: string]> = [
  ['1', ''],
  ['2', 'ABC'],
  ['3', 'DEF'],
  ['4', 'GHI'],
  ['5', 'JKL'],
  ['6', 'MNO'],
  ['7', 'PQRS'],
  ['8', 'TUV'],
  ['9', 'WXYZ'],
  ['*', ''],
  ['0', '+'],
  ['#', ''],
];

const keyButtons = keys
  .map(
    ([key, letters]) =>
      `<button type="button" data-key="${key}">${key}<small aria-hidden="true">${letters || '&nbsp;'}</small></button>`,
  )
  .join('\n      ');

const html = (serviceCode: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Feature phone (sandbox)</title>
<style>${style}</style>
</head>
<body data-service-code="${escapeAttribute(serviceCode)}">
<main>
  <h1>Feature phone</h1>
  <p class="note">Sandbox: dial <strong>${escapeAttribute(serviceCode)}</strong> as a phone with no browser would. Each step reaches the service as the USSD gateway's callback.</p>
  <label for="phone">Phone dialling</label>
  <input id="phone" type="tel" inputmode="tel" autocomplete="off" placeholder="08031234567">
  <div class="handset">
    <div class="speaker" aria-hidden="true"></div>
    <p id="screen-label" hidden>Phone screen</p>
    <pre id="screen" role="status" aria-live="polite" aria-atomic="true" aria-labelledby="screen-label"></pre>
    <form id="keypad" novalidate>
      <label for="entry">Typed on the keypad</label>
      <input id="entry" type="text" inputmode="tel" autocomplete="off" spellcheck="false" maxlength="40">
      <div class="calls">
        <button id="send" type="submit">Send</button>
        <button id="cancel" type="button">Cancel</button>
      </div>
      <div class="keys" role="group" aria-label="Keypad">
      ${keyButtons}
      </div>
    </form>
  </div>
</main>
<script>${script}</script>
</body>
</html>
`;

const contentSecurityPolicy = scriptedPagePolicy(style, script);

export function registerUssdPhonePage(app: FastifyInstance, options: { serviceCode: string }): void {
  const page = html(options.serviceCode);
  app.get(
    '/__sandbox/ussd',
    { schema: { hide: true }, config: { rateLimit: false } },
    async (_request, reply) =>
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', contentSecurityPolicy)
        .header('referrer-policy', 'no-referrer')
        .send(page),
  );
}
