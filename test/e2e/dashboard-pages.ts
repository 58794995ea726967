// What the dashboard's browser tests share: the widths they check at, the problems Chromium reports on a page (CSP
// refusals, script errors, failed loads), axe-core's check at desktop and phone widths with the page's screenshot
// (DASHBOARD_SCREENSHOTS=<dir>), the keyboard's Tab walk at both widths (tab-walk.ts), a locator's text, and the stack each file starts: `wrangler dev` with its upstreams
// and Chromium, started before the file's tests when Chromium is installed.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { BrowserContext, ConsoleMessage, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, expect, type TestContext } from "vitest";
import { chromiumOrSkip, chromiumPath, launchBrowser, type TestBrowser } from "../../harness/browser.ts";
import { E2E_SECRETS_KEY } from "../../harness/clients.ts";
import type { ReplayRoute } from "../../harness/replay-types.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { tabWalkProblems } from "./tab-walk.ts";

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

/** Problems the browser reports on a page: CSP refusals (console errors) and script errors. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (m: ConsoleMessage) => {
    if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (err) => problems.push(err.message));
  page.on("response", (r) => {
    if (r.status() >= 400 && !r.url().endsWith("/dashboard/sign-in")) problems.push(`${r.status()} ${r.url()}`);
  });
  return problems;
}

/** axe-core's violations of the page (none expected), at its current width. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}

/** Checks the page at desktop and phone widths (axe, then a keyboard's Tab walk), and saves it when screenshots are asked for. */
export async function checkPage(page: Page, name: string): Promise<void> {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    expect(await accessibilityProblems(page), `${name} at ${size.width}px`).toEqual([]);
    expect(await tabWalkProblems(page), `${name} at ${size.width}px: the Tab walk`).toEqual([]);
  }
  await page.setViewportSize(DESKTOP);
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  }
}

/** A locator's text, trimmed (its one element: playwright-core has no expect of its own). */
export const textOf = async (locator: Locator): Promise<string | undefined> => (await locator.textContent())?.trim();


export const ADMIN_TOKEN = "e2e-dashboard-admin-token";

/**
 * A new browser context at desktop width, signed in at `base`'s operator dashboard through its form (the sign-in itself
 * is tested in dashboard-browser.test.ts), its page watched for problems from the start. The caller closes `context`.
 */
export async function operatorPage(browser: TestBrowser, base: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const problems = watchProblems(page);
  await page.goto(`${base}/dashboard`);
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await Promise.all([page.waitForURL(`${base}/dashboard`), page.getByRole("button", { name: "Sign in" }).click()]);
  return { context, page, problems };
}
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN };

export interface BrowserStack {
  /** The proxy as `npm run dev` prints it: 127.0.0.1, plain http. */
  base: () => string;
  /** The running stack and browser for a test; without Chromium the test skips (under CI, fails). */
  fixtures: (ctx: TestContext) => { browser: TestBrowser; stack: DevStack };
}

/** Starts `wrangler dev` (with `replay`'s routes), provisions it through `provision`, and Chromium, for this file's tests. */
export function browserStack(name: string, replay: Record<string, ReplayRoute>, provision: (stack: DevStack, base: string) => Promise<void>): BrowserStack {
  let stack: DevStack | undefined;
  let browser: TestBrowser | undefined;
  const base = () => `http://127.0.0.1:${stack!.port}`;
  beforeAll(async () => {
    if (chromiumPath() === undefined) return;
    stack = await startDevStack({ name, replay, vars: VARS, provision: () => undefined });
    await provision(stack, base());
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  }, 60_000);
  const fixtures = (ctx: TestContext) => {
    chromiumOrSkip((note) => ctx.skip(note));
    if (!browser || !stack) throw new Error("Chromium is installed but the fixtures did not start");
    const running = stack;
    const shown = running.proxy.output().length;
    ctx.onTestFailed(() => console.error(`wrangler dev output during the test:\n${running.proxy.output().slice(shown).slice(-6000)}`));
    return { browser, stack: running };
  };
  return { base, fixtures };
}
