import { formatNaira } from '../../money.ts';
import { inlineSourceHash } from '../page-policy.ts';
import type { SandboxCustomer, SandboxTransaction } from './state.ts';

// GET /__sandbox/checkout/<reference>: the sandbox's stand-in for Paystack's hosted checkout page.
// Plain HTML forms, no script: Pay and Decline post to /__sandbox/checkout/<reference>/pay|decline,
// which answer with a redirect back here (so a reload does not pay twice), and the page then shows the
// outcome. After a successful payment it links back to the merchant's callback_url with
// ?trxref=<reference>&reference=<reference>, as Paystack redirects.

const style = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 30rem; margin: 2rem auto; padding: 0 1rem; color: #1f2933; }
  h1 { font-size: 1.4rem; margin-bottom: .25rem; }
  .note { color: #616e7c; margin-top: 0; }
  .amount { font-size: 2rem; font-weight: 700; margin: 1rem 0; }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
  dt { font-weight: 600; }
  dd { margin: 0; overflow-wrap: anywhere; }
  .buttons { display: flex; gap: .75rem; margin-top: 1.5rem; }
  .buttons form { flex: 1; margin: 0; }
  button { width: 100%; padding: .7rem; font: inherit; font-weight: 600; border: 0; border-radius: 6px; cursor: pointer; color: #fff; }
  #pay { background: #2f8132; }
  #decline { background: #b42318; }
  .outcome { margin-top: 1.5rem; font-weight: 600; font-size: 1.2rem; }
  .outcome.success { color: #2f8132; }
  .outcome.failed { color: #b42318; }
`;

/** Only this page's own style; forms post to this origin only; no script at all. */
export const checkoutContentSecurityPolicy = [
  "default-src 'none'",
  `style-src ${inlineSourceHash(style)}`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** The merchant's callback URL with Paystack's query parameters; null when there is none or it is unusable. */
function callbackLink(transaction: SandboxTransaction): string | null {
  if (transaction.callbackUrl === null) return null;
  try {
    const url = new URL(transaction.callbackUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.searchParams.set('trxref', transaction.reference);
    url.searchParams.set('reference', transaction.reference);
    return url.toString();
  } catch {
    return null;
  }
}

export function checkoutPage(transaction: SandboxTransaction, customer: SandboxCustomer): string {
  const reference = escapeHtml(transaction.reference);
  const path = `/__sandbox/checkout/${encodeURIComponent(transaction.reference)}`;
  let action: string;
  if (transaction.status === 'abandoned') {
    action = `<div class="buttons">
  <form method="post" action="${escapeHtml(`${path}/pay`)}"><button id="pay" type="submit">Pay ${formatNaira(transaction.amountKobo)}</button></form>
  <form method="post" action="${escapeHtml(`${path}/decline`)}"><button id="decline" type="submit">Decline</button></form>
</div>`;
  } else {
    // Declined too: the merchant's page says what happened and offers another try, so the person is
    // never left on the provider's page with no way back.
    const link = callbackLink(transaction);
    const outcome =
      transaction.status === 'success'
        ? '<p class="outcome success" role="status">Payment successful</p>'
        : '<p class="outcome failed" role="status">Payment declined</p>';
    action = `${outcome}${link === null ? '' : `\n<p><a href="${escapeHtml(link)}">Return to the merchant</a></p>`}`;
  }
  return page(
    'Checkout (sandbox)',
    `<h1>Pay billrail</h1>
<p class="note">Sandbox: this page stands in for the payment provider's checkout. No card is charged.</p>
<div class="amount">${formatNaira(transaction.amountKobo)}</div>
<dl>
  <dt>Email</dt><dd>${escapeHtml(customer.email)}</dd>
  <dt>Reference</dt><dd><code>${reference}</code></dd>
</dl>
${action}`,
  );
}

export function unknownCheckoutPage(reference: string): string {
  return page(
    'Checkout (sandbox)',
    `<h1>Unknown transaction</h1>
<p class="note">The sandbox payment provider has no transaction with the reference <code>${escapeHtml(reference)}</code>.</p>`,
  );
}
