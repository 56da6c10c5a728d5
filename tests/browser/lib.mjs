// What the browser tests share: the environment scripts/browser_test.sh passes, the
// browser (Debian's chromium through playwright-core), signed-in pages, bounded waits
// and screenshots.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

export const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set: run this through scripts/browser_test.sh`);
  return v;
};
const require = createRequire(path.join(env('BROWSER_DEPS'), 'package.json'));
const { chromium } = require('playwright-core');

export const URL = env('GPUSCHED_URL');
const SHOTS = env('SCREENSHOT_DIR');
export const WAIT = 20000; // ms: generous, the machine may be busy

/** The CLI over the server's Unix socket (as its admin). */
export const cli = (...args) => execFileSync(env('GPUSCHED_BIN'), [...args, '--server', env('GPUSCHED_SOCK')],
  { encoding: 'utf8', timeout: 30000 });

export async function until(what, f, ms = WAIT) {
  const end = Date.now() + ms;
  for (;;) {
    if (await f()) return;
    if (Date.now() > end) throw new Error(`gave up after ${ms / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Runs `steps(t)` in a fresh headless Chromium; exits 1 naming the failed step. */
export async function run(steps) {
  const browser = await chromium.launch({
    executablePath: env('CHROMIUM'),
    headless: true,
    timeout: 60000,
    // Playwright gives each launch a fresh temporary --user-data-dir itself.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const pages = [];
  const problems = [];
  let step = 'start';
  const t = {
    say(what) {
      step = what;
      console.log(`- ${what}`);
    },
    async shot(page, name) {
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    },
    /** A new browser context (its own sessionStorage) on the page, not signed in. */
    async open(name) {
      const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
      const page = await context.newPage();
      page.setDefaultTimeout(WAIT);
      pages.push([name, page]);
      // A script error or a CSP violation is a failure, not noise.
      page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error' && !/status of 40[134]/.test(m.text())) problems.push(`${name}: console: ${m.text()}`);
      });
      await page.goto(`${URL}/`);
      await page.locator('#token').waitFor();
      return page;
    },
    /** The same, signed in with a token, on the overview. */
    async session(name, tok) {
      const page = await t.open(name);
      await page.fill('#token', tok);
      await page.click('#signin-submit');
      await page.locator('#gpu-nodes section.node').first().waitFor();
      return page;
    },
  };
  try {
    await steps(t);
    if (problems.length) throw new Error(`the page logged errors:\n${problems.join('\n')}`);
  } catch (e) {
    console.error(`FAILED at "${step}": ${e.message}`);
    for (const [name, page] of pages) {
      await page.screenshot({ path: path.join(SHOTS, `failed-${name}.png`), fullPage: true }).catch(() => {});
    }
    if (problems.length) console.error(problems.join('\n'));
    await browser.close();
    process.exit(1);
  }
  await browser.close();
}
