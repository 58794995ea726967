// The operator dashboard in a real browser, under `wrangler dev` at http://127.0.0.1:<port> as `npm run dev` serves it:
// a live MCP call first, then Chromium signs in (a wrong token refused, the right one in), finds the team in the list
// with its call counted, opens its overview (the figures the usage API reports, the call among the top tools), and
// signs out. Along the way: no Content-Security-Policy violation on any page (so the stylesheet is the only thing
// loaded, and it applies), the session cookie as Chromium stores it on plain-http loopback (`__Host-`, Secure,
// HttpOnly, SameSite=Strict), a form posted from another site refused, and axe-core's accessibility check on every
// page at desktop and phone widths. With DASHBOARD_SCREENSHOTS=<dir> each page is saved there (docs/dashboard/).
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { AxeBuilder } from "@axe-core/playwright";
import type { ConsoleMessage, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { chromiumOrSkip, chromiumPath, launchBrowser, type TestBrowser } from "../../harness/browser.ts";
import { E2E_SECRETS_KEY, connectClient, provisionByAdmin } from "../../harness/clients.ts";
import { waitFor } from "../shared/wait.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const TEAM = "dash";
const ADMIN_TOKEN = "e2e-dashboard-admin-token";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

let stack: DevStack | undefined;
let browser: TestBrowser | undefined;
let token: string;

beforeAll(async () => {
  // Without Chromium nothing is started: the test then skips (or, under CI, fails) through chromiumOrSkip.
  if (chromiumPath() === undefined) return;
  stack = await startDevStack({ name: "dashboard", replay: {}, vars: VARS, provision: () => undefined });
  token = await provisionByAdmin(base(), ADMIN_TOKEN, TEAM, { mcp: { everything: { url: stack.everything.url } } }, "dashboard-e2e");
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 60_000);

/** The proxy as `npm run dev` prints it: 127.0.0.1, plain http. */
const base = () => `http://127.0.0.1:${stack!.port}`;

/** Problems the browser reports on a page: CSP refusals (console errors) and script errors. */
function watchProblems(page: Page): string[] {
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

/** Checks the page at desktop and phone widths (axe), and saves it when screenshots are asked for. */
async function checkPage(page: Page, name: string): Promise<void> {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    expect(await accessibilityProblems(page), `${name} at ${size.width}px`).toEqual([]);
  }
  await page.setViewportSize(DESKTOP);
  const dir = process.env.DASHBOARD_SCREENSHOTS;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  }
}

/** A locator's text, trimmed (its one element: playwright-core has no expect of its own). */
const textOf = async (locator: Locator): Promise<string | undefined> => (await locator.textContent())?.trim();

/** The usage API's totals of the team. */
async function usageTotals(): Promise<{ sessions: number; sent: number; saved: number; direct: number; calls: { tools: number } }> {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/usage`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { totals: { sessions: number; sent: number; saved: number; direct: number; calls: { tools: number } } }).totals;
}

/** A page of another site (localhost is another site than 127.0.0.1) whose form posts to the dashboard's sign-out. */
async function foreignSite(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><title>Another site</title><form method="post" action="${target}"><input type="hidden" name="csrf" value="guess"><button>Go</button></form>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://localhost:${port}/`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function fixtures(ctx: TestContext) {
  chromiumOrSkip((note) => ctx.skip(note));
  if (!browser || !stack) throw new Error("Chromium is installed but the fixtures did not start");
  const shown = stack.proxy.output().length;
  ctx.onTestFailed(() => console.error(`wrangler dev output during the test:\n${stack?.proxy.output().slice(shown).slice(-6000)}`));
  return { browser, stack };
}

describe("the dashboard in Chromium under wrangler dev", () => {
  it("signs in (wrong token refused), shows a live call in the team list and the overview, holds its CSP, signs out", async (ctx) => {
    const { browser } = fixtures(ctx);
    // A live call first: a host's session lists the tools, searches, calls a real upstream's tool, and ends (its usage
    // goes to the ledger).
    const host = await connectClient(`${base()}/t/${TEAM}/mcp`, token);
    await host.client.listTools();
    await host.client.callTool({ name: "discover_tool", arguments: { query: "echo a message back" } });
    const echoed = await host.client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "dashboard-e2e" } } });
    expect(text(echoed)).toContain("dashboard-e2e");
    await host.transport.terminateSession();
    await host.client.close();
    expect(await waitFor(async () => (await usageTotals()).calls.tools === 1, { tries: 100, ms: 100 })).toBe(true);

    // A context of its own rather than browser.newPage(): axe opens a page beside the one it checks.
    const context = await browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    const problems = watchProblems(page);

    // The sign-in form, styled by the stylesheet (the only thing the CSP lets in).
    const form = await page.goto(`${base()}/dashboard`);
    expect(form?.status()).toBe(200);
    expect(form?.headers()["content-security-policy"]).toContain("default-src 'none'");
    expect(await page.getByLabel("Admin token").count()).toBe(1);
    expect(await page.locator("button[type=submit]").evaluate((b) => getComputedStyle(b).backgroundColor)).toBe("rgb(29, 78, 216)");
    await checkPage(page, "sign-in");

    // A wrong token: the form again, 401, an alert, no cookie.
    await page.getByLabel("Admin token").fill("not-the-admin-token");
    const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith("/dashboard/sign-in")), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(refused.status()).toBe(401);
    expect(await textOf(page.getByRole("alert"))).toBe("That is not the admin token.");
    expect(await page.context().cookies()).toEqual([]);

    // The right one: the team list, and the cookie as Chromium keeps it on http://127.0.0.1.
    await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${base()}/dashboard`), page.getByRole("button", { name: "Sign in" }).click()]);
    const cookies = await page.context().cookies();
    expect(cookies.map(({ name, secure, httpOnly, sameSite, path }) => ({ name, secure, httpOnly, sameSite, path }))).toEqual([
      { name: "__Host-dynmcp-dashboard", secure: true, httpOnly: true, sameSite: "Strict", path: "/" },
    ]);
    const row = page.locator(`tr[data-team="${TEAM}"]`);
    expect(await textOf(row.locator("td[data-calls]"))).toBe("1");
    expect(await textOf(row.locator("td[data-servers]"))).toBe("1");
    expect(await textOf(row.locator("td[data-tokens]"))).toBe("1");
    await checkPage(page, "teams");

    // The overview: the usage API's figures, the call among the top tools.
    await Promise.all([page.waitForURL(`${base()}/dashboard/teams/${TEAM}`), row.getByRole("link", { name: TEAM }).click()]);
    const usage = await usageTotals();
    expect(await textOf(page.locator('[data-total="calls"]'))).toBe(String(usage.calls.tools));
    expect(await textOf(page.locator('[data-total="sessions"]'))).toBe(String(usage.sessions));
    expect(await textOf(page.locator('[data-total="saved"]'))).toBe(usage.saved.toLocaleString("en-US"));
    expect(await textOf(page.locator('tr[data-tool="everything/echo"] td').first())).toBe("1");
    expect(await page.locator("#activity-chart rect.bar").count()).toBeGreaterThan(0);
    expect(await page.content()).not.toContain(token);
    await checkPage(page, "overview");

    // Another site's form posting to sign-out: refused (the Strict cookie stays home, and the Origin is foreign).
    const foreign = await foreignSite(`${base()}/dashboard/sign-out`);
    try {
      const other = await browser.newContext();
      await other.addCookies(cookies.map((c) => ({ ...c })));
      const attacker = await other.newPage();
      await attacker.goto(foreign.url);
      const [answer] = await Promise.all([attacker.waitForResponse((r) => r.url().endsWith("/dashboard/sign-out")), attacker.getByRole("button").click()]);
      expect(answer.status()).toBe(403);
      await other.close();
    } finally {
      await foreign.close();
    }

    // Sign out: back to the form, the cookie gone, and the overview no longer shown.
    await Promise.all([page.waitForURL(`${base()}/dashboard`), page.getByRole("button", { name: "Sign out" }).click()]);
    expect(await page.getByLabel("Admin token").count()).toBe(1);
    expect(await page.context().cookies()).toEqual([]);
    await page.goto(`${base()}/dashboard/teams/${TEAM}`);
    expect(page.url()).toBe(`${base()}/dashboard`);

    // The wrong token's 401 is the one console error Chromium reports (a failed resource load); nothing else, no CSP refusal.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    await context.close();
  });
});
