// A real browser for end-to-end tests of sign-in flows (issue 16): the system's Chromium (Debian's `chromium`) driven
// by playwright-core, which downloads no browser of its own. `.ci/run` installs Chromium on a CI machine; elsewhere a
// test without one is skipped (`chromiumOrSkip`). Node only: never imported by src/.
//
// Cookies on loopback (probed with Debian bookworm's Chromium 150.0.7871.100 and 156.0.8078.79, the version CI's
// `apt-get install` gets from bookworm-security, both through this launcher): a server at
// `http://localhost:<port>`, `http://127.0.0.1:<port>` or `http://[::1]:<port>` that answers
// `Set-Cookie: __Host-x=1; Secure; HttpOnly; SameSite=Lax; Path=/` has it stored (secure=true) and sent back, both on
// the next request and on the redirect back from a sign-in form at another loopback origin (a POST, 303s, then the
// GET of the callback). Chromium counts loopback hosts as secure contexts, so plain http is enough for `Secure` and
// `__Host-` there; the same header from a non-loopback name (`rp.test` mapped to 127.0.0.1) is dropped. Sites ignore
// ports: 127.0.0.1:A and 127.0.0.1:B are the same site, while localhost and 127.0.0.1 are not, so a
// `SameSite=Strict` cookie set at localhost is not sent on the callback from an IdP at 127.0.0.1 (Lax is).
import { mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";

/** Where Debian's package puts it; `CHROMIUM_PATH` names another. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";
/** Default for every navigation and action (click, fill, waitForURL): a loopback page answers in milliseconds. */
export const BROWSER_TIMEOUT_MS = 15_000;
/** Starting Chromium takes about a second here; a stuck start fails instead of stalling the test run. */
const LAUNCH_TIMEOUT_MS = 20_000;
/** `browser.close()` normally takes well under a second; past this the temp dir is removed anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * The flags that let Chromium run as root on a closed network (see the machine notes): without the
 * background-networking ones it keeps dialling Google's services, and those connections are refused. playwright-core
 * already passes most of these (and its own fresh, empty `--user-data-dir`, removed on close); listing them here
 * keeps them whatever a later playwright-core decides. `--user-data-dir` itself must not be in `args`: playwright
 * refuses it (that is `launchPersistentContext`, which has one context only, not a fresh one per test).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The Chromium to drive: `CHROMIUM_PATH` or Debian's, if that file exists; otherwise undefined. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  return existsSync(path) ? path : undefined;
}

/**
 * For a browser test: the Chromium to drive. When there is none, outside CI the test is skipped through `skip`
 * (vitest's `ctx.skip`) with a message saying how to get one; under CI (`CI` set) it throws, because CI must run the
 * browser tests and a silent skip there would hide that they never ran.
 */
export function chromiumOrSkip(skip: (note: string) => never, env: NodeJS.ProcessEnv = process.env): string {
  const path = chromiumPath(env);
  if (path !== undefined) return path;
  const wanted = env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
  if (env.CI) {
    throw new Error(
      `No Chromium at ${wanted}, and CI is set: CI must run the browser tests (.ci/run installs Debian's chromium).`,
    );
  }
  skip(`no Chromium at ${wanted} (apt-get install chromium, or set CHROMIUM_PATH); CI does not skip this`);
  // `skip` throws in vitest; a caller whose `skip` returns must still not get a path that does not exist.
  throw new Error(`No Chromium at ${wanted}`);
}

export interface TestBrowser {
  /** The Chromium version, e.g. `150.0.7871.100`. */
  version: string;
  executablePath: string;
  /** A fresh context (its own cookies and storage, like a new incognito window) with the default timeouts. */
  newContext: (options?: BrowserContextOptions) => Promise<BrowserContext>;
  /** A page in a fresh context of its own; closing the page closes that context. */
  newPage: (options?: BrowserContextOptions) => Promise<Page>;
  /** Closes every context and the browser, and removes the temp dir. Safe to call twice. */
  close: () => Promise<void>;
}

export interface LaunchOptions {
  /** By default `chromiumPath()`; launching throws when there is none. */
  executablePath?: string;
  /** Flags beyond {@link CHROMIUM_ARGS}. */
  args?: string[];
}

/** Starts headless Chromium; one per test file, with a fresh context per test (`newPage` / `newContext`). */
export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const executablePath = options.executablePath ?? chromiumPath();
  if (executablePath === undefined || !existsSync(executablePath)) {
    throw new Error(`launchBrowser: no Chromium at ${executablePath ?? (process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH)}`);
  }
  // Our own dir for what playwright writes besides the profile (downloads, traces), removed by close().
  const dir = await mkdtemp(join(tmpdir(), "dynmcp-browser-"));
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath,
      args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
      headless: true,
      // playwright-core adds --no-sandbox unless this is true: Chromium's sandbox does not start as root.
      chromiumSandbox: false,
      artifactsDir: dir,
      timeout: LAUNCH_TIMEOUT_MS,
      // playwright's default signal and exit handlers stay on: Chromium runs in a process group of its own, so they
      // are what kills it when a test worker is stopped or exits without close().
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  const bounded = (context: BrowserContext): BrowserContext => {
    context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
    return context;
  };
  let closed: Promise<void> | undefined;

  return {
    version: browser.version(),
    executablePath,
    newContext: async (contextOptions) => bounded(await browser.newContext(contextOptions)),
    newPage: async (contextOptions) => {
      // browser.newPage() gives the page a context of its own that closes with it.
      const page = await browser.newPage(contextOptions);
      bounded(page.context());
      return page;
    },
    close: () =>
      (closed ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            browser.close(),
            new Promise<never>((_resolve, reject) => {
              timer = setTimeout(() => reject(new Error("launchBrowser: browser.close() timed out")), CLOSE_TIMEOUT_MS);
            }),
          ]);
        } finally {
          clearTimeout(timer);
          await rm(dir, { recursive: true, force: true });
        }
      })()),
  };
}

/** Waits for the browser to reach `where`; if it stops elsewhere (an error page), says where and what it shows. */
export async function arrive(page: Page, at: (url: URL) => boolean, where: string): Promise<void> {
  try {
    await page.waitForURL(at);
  } catch (err) {
    const shown = await page.locator("body").innerText().catch(() => "(no page)");
    throw new Error(`the browser did not reach ${where}; it is at ${page.url()} showing: ${shown.slice(0, 500)}`, { cause: err });
  }
}
