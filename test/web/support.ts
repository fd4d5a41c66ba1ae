import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ensureWebBuilt } from '../../src/web-build.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The web client's browser tests: Debian's headless Chromium driven by playwright-core at a phone's
// size (360×800), axe-core over every screen, and a screenshot of each.

export const chromiumPath = '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);
export const skipWithoutChromium = haveChromium ? false : 'chromium not installed: apt-get install chromium';

/** Where the screenshots of a test run go (gitignored). */
export const screenshotDir = path.resolve(process.env.SCREENSHOT_DIR ?? '.data-test/screens');

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
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
}

export async function phonePage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 360, height: 800 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-NG',
    timezoneId: 'Africa/Lagos',
  });
  return context.newPage();
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type AxeViolation = { id: string; impact: string | null; help: string; nodes: Array<{ target: string[] }> };

/**
 * Runs axe-core over the page as it is and fails on any serious or critical violation. axe is
 * evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern
 * (an injected <script> would be refused, rightly).
 */
export async function assertAccessible(page: Page, screen: string): Promise<void> {
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: axe found ${JSON.stringify(serious, null, 2)}`);
}

/**
 * Saves 360×800 screenshots of the screen in light and in dark (the client follows the phone's
 * scheme), `<name>.png` and `<name>.dark.png`, and checks it is accessible in both.
 */
export async function screen(page: Page, name: string): Promise<void> {
  await mkdir(screenshotDir, { recursive: true });
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await assertAccessible(page, `${name} (${colorScheme})`);
    await page.screenshot({
      path: path.join(screenshotDir, `${name}${colorScheme === 'dark' ? '.dark' : ''}.png`),
    });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * Gives the page's origin the session `refreshToken`, as the sign-in screen keeps it, from a page
 * of the origin where the app does not run (/openapi.json): set on a screen of the app, the app
 * would start refreshing with it at once, and the test's next navigation would cut that refresh
 * off after the service had rotated the token, which then reads as a reuse and ends the session.
 */
export async function injectSession(page: Page, baseUrl: string, refreshToken: string): Promise<void> {
  await page.goto(`${baseUrl}/openapi.json`);
  await page.evaluate((token) => localStorage.setItem('billrail.refresh', token), refreshToken);
}

/**
 * A phone (a browser context of its own) signed in as `user` with the refresh token the sign-in
 * screen keeps, on home once the balance shows: the first call has refreshed the session by then, so
 * no navigation that follows cuts the rotated refresh token off on its way to the page.
 */
export async function signedInPhone(
  browser: Browser,
  baseUrl: string,
  user: { refreshToken: string },
): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, baseUrl, user.refreshToken);
  await page.goto(`${baseUrl}/`);
  await page.getByTestId('balance').filter({ hasText: '₦' }).waitFor({ timeout: 30_000 });
  return page;
}

/** A browser test's service and browser: the client built, a sandbox world, headless Chromium. */
export async function openBrowserWorld(
  options?: Parameters<typeof createWorld>[0],
): Promise<{ world: World; browser: Browser }> {
  await ensureWebBuilt({});
  const world = await createWorld(options);
  return { world, browser: await launchChromium() };
}

/** Closes what `openBrowserWorld` opened, whatever of it a failed start left. */
export async function closeBrowserWorld(opened: { world?: World; browser?: Browser }): Promise<void> {
  await opened.browser?.close();
  await opened.world?.close();
}
