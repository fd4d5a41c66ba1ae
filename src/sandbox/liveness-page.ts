import type { FastifyInstance } from 'fastify';
import { scriptedPagePolicy } from './page-policy.ts';

// GET /__sandbox/liveness: the sandbox's stand-in for the KYC provider's browser widget. It gets a
// liveness token from the sandbox provider (POST /__sandbox/kyc/liveness/sessions) and submits it to
// the service exactly as a client app would (POST /_serverFn/submitKycTier1 with the user's bearer
// token), then shows what the service decided. The user's access token comes from the URL fragment
// (`#accessToken=...`, never sent to a server) or the text field. Opened by the web client with
// `?state=<the check's state>&return=<path>` (getKycLivenessUrl gives the state), it hands the token
// back to that path (`?livenessToken=...&state=...`) as a hosted widget redirects back, and the
// client submits it. Opened on its own, it starts a check itself (getKycLivenessUrl) for the state.
//
// The return path must be a path of this origin: it is checked here (ownReturnPath), where a bad one
// is a 400 page, and the page is handed only the checked path, which its script checks again. A
// browser strips tabs and newlines from a URL and reads a backslash as a slash, so `/<TAB>/evil`
// or `/\evil` would leave the origin: control characters, spaces and backslashes are refused, in
// the value and in the value decoded once (`/%2F%2Fevil` is `///evil` to some routers).

const style = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 2rem auto; padding: 0 1rem; color: #1f2933; }
  h1 { font-size: 1.4rem; margin-bottom: .25rem; }
  .note { color: #616e7c; margin-top: 0; }
  label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #cbd2d9; border-radius: 6px; }
  .camera { position: relative; height: 15rem; margin: 1rem 0; border-radius: 12px; background: #102a43;
    display: flex; align-items: center; justify-content: center; overflow: hidden; }
  .camera .face { width: 8rem; height: 10.5rem; border: 3px dashed #9fb3c8; border-radius: 50%; }
  .camera .caption { position: absolute; bottom: .5rem; color: #d9e2ec; font-size: .85rem; }
  .buttons { display: flex; gap: .75rem; }
  button { flex: 1; padding: .7rem; font: inherit; font-weight: 600; border: 0; border-radius: 6px; cursor: pointer; color: #fff; }
  button:disabled { opacity: .5; cursor: wait; }
  #pass { background: #2f8132; }
  #fail { background: #b42318; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin-top: 1.5rem; }
  dt { font-weight: 600; }
  dd { margin: 0; overflow-wrap: anywhere; }
  #result[data-state="approved"] { color: #2f8132; font-weight: 600; }
  #result[data-state="rejected"], #result[data-state="error"] { color: #b42318; font-weight: 600; }
`;

const script = `
  const field = document.getElementById('accessToken');
  const tokenOut = document.getElementById('token');
  const result = document.getElementById('result');
  const buttons = document.querySelectorAll('button');

  // Take the access token from the fragment, then drop it from the address bar and the history.
  // The state of the check the client app started (getKycLivenessUrl), when it sent one.
  const state = new URLSearchParams(location.search).get('state');
  const fragment = new URLSearchParams(location.hash.slice(1));
  field.value = fragment.get('accessToken') ?? '';
  if (location.hash !== '') history.replaceState(null, '', location.pathname + location.search);

  function show(state, text) {
    result.dataset.state = state;
    result.textContent = text;
  }

  // crypto.randomUUID exists only on https or localhost; a sandbox on a LAN address has neither.
  function uuid() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }

  async function json(response) {
    try { return await response.json(); } catch { return null; }
  }

  async function check(outcome) {
    for (const button of buttons) button.disabled = true;
    tokenOut.textContent = '…';
    show('working', 'Checking…');
    try {
      // 1. The provider's widget: a liveness session ends with a token.
      const session = await fetch('/__sandbox/kyc/liveness/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ outcome }),
      });
      const issued = await json(session);
      if (!session.ok || typeof issued?.token !== 'string') {
        throw new Error('The liveness provider answered ' + session.status);
      }
      tokenOut.textContent = issued.token;

      // A client app that sent the person here (?return=/its/path, checked by the server to be a
      // path of this origin, and checked again here) gets the token and the check's state back as
      // a hosted widget hands them back, and submits them itself.
      const back = document.body.dataset.return;
      if (back !== undefined) {
        const target = new URL(back, location.origin);
        if (target.origin !== location.origin) throw new Error('The return address is not a page of this service');
        target.searchParams.set('livenessToken', issued.token);
        if (state !== null) target.searchParams.set('state', state);
        location.assign(target.href);
        return;
      }

      // 2. The client app: start a check of this person's when none came with the page, then
      // submit the token with its state to the service.
      const accessToken = field.value.trim();
      const authorization = 'Bearer ' + accessToken;
      let checkState = state;
      if (checkState === null) {
        const started = await fetch('/_serverFn/getKycLivenessUrl', { headers: { authorization } });
        const check = await json(started);
        if (check?.success !== true) throw new Error(check?.error?.message ?? 'The service answered ' + started.status);
        checkState = check.data.state;
      }
      const headers = { 'content-type': 'application/json', 'idempotency-key': uuid() };
      const submitted = await fetch('/_serverFn/submitKycTier1', {
        method: 'POST',
        headers: { ...headers, authorization },
        body: JSON.stringify({ data: { livenessToken: issued.token, state: checkState } }),
      });
      const answer = await json(submitted);
      if (answer?.success !== true) {
        throw new Error(answer?.error?.message ?? 'The service answered ' + submitted.status);
      }

      // 3. What the service decided, as getKycStatus reports it.
      const status = await fetch('/_serverFn/getKycStatus', { headers: { authorization: 'Bearer ' + accessToken } });
      const kyc = await json(status);
      const tier1 = kyc?.success === true ? kyc.data.tiers.find((t) => t.tier === 1) : undefined;
      if (tier1 === undefined) throw new Error(kyc?.error?.message ?? 'The service answered ' + status.status);
      if (tier1.status === 'approved') show('approved', 'Tier 1 approved');
      else if (tier1.status === 'rejected') show('rejected', 'Tier 1 rejected: ' + (tier1.reason ?? 'no reason given'));
      else show(tier1.status, 'Tier 1 ' + tier1.status);
    } catch (error) {
      show('error', error instanceof Error ? error.message : String(error));
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }

  document.getElementById('pass').addEventListener('click', () => check('pass'));
  document.getElementById('fail').addEventListener('click', () => check('fail'));
`;

const escapeAttribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page, handed the checked return path (or none) in an attribute its script reads. */
const html = (returnPath: string | null) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Liveness check (sandbox)</title>
<style>${style}</style>
</head>
<body${returnPath === null ? '' : ` data-return="${escapeAttribute(returnPath)}"`}>
<h1>Liveness check</h1>
<p class="note">Sandbox: this page stands in for the KYC provider's camera widget. No camera is used.</p>
<label for="accessToken">Access token</label>
<input id="accessToken" type="text" autocomplete="off" spellcheck="false" placeholder="the user's access token">
<div class="camera" aria-hidden="true"><div class="face"></div><div class="caption">Simulated camera</div></div>
<div class="buttons">
  <button id="pass" type="button">Complete liveness check</button>
  <button id="fail" type="button">Fail liveness check</button>
</div>
<dl>
  <dt>Token</dt><dd><code id="token">–</code></dd>
  <dt>Result</dt><dd id="result" role="status" aria-live="polite">–</dd>
</dl>
<script>${script}</script>
</body>
</html>
`;

const contentSecurityPolicy = scriptedPagePolicy(style, script);

const refusedHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Liveness check (sandbox): bad return address</title>
<style>${style}</style>
</head>
<body>
<h1>This return address is not a page of this service</h1>
<p>The face check hands its result back only to a path of this service, such as <code>/verify</code>.
Go back to the app and start the face check again.</p>
</body>
</html>
`;

/** An origin the return path is resolved against; any fixed one shows whether it stays on it. */
const probeOrigin = 'http://liveness.invalid';
/** Control characters, space, DEL and the backslash (which browsers read as a slash). */
const unsafe = (text: string) =>
  [...text].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f || c === '\\');

/**
 * The return path as a path of this origin (its pathname and query), or null when it is not one:
 * it must start with one slash and hold no control character, space or backslash, in itself and
 * decoded once, and resolve to this origin.
 */
export function ownReturnPath(value: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return null;
  }
  for (const form of [value, decoded]) {
    if (unsafe(form) || !form.startsWith('/') || form.startsWith('//')) return null;
  }
  const resolved = new URL(value, probeOrigin);
  if (resolved.origin !== probeOrigin) return null;
  return `${resolved.pathname}${resolved.search}`;
}

export function registerSandboxLivenessPage(app: FastifyInstance): void {
  app.get(
    '/__sandbox/liveness',
    { schema: { hide: true }, config: { rateLimit: false } },
    async (request, reply) => {
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', contentSecurityPolicy)
        .header('referrer-policy', 'no-referrer');
      const query = request.query as Record<string, unknown>;
      if (query.return === undefined) return reply.send(html(null));
      const returnPath = typeof query.return === 'string' ? ownReturnPath(query.return) : null;
      if (returnPath === null) return reply.code(400).send(refusedHtml);
      return reply.send(html(returnPath));
    },
  );
}
