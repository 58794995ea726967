// A member's browser during a host's sign-in, driven over HTTP (docs/oauth.md 3.5): it follows redirects by hand with
// a cookie jar, answers the proxy's consent page and the test IdP's sign-in form (harness/idp.ts), and stops where the
// browser leaves both for the host's redirect URI. It also walks a connect link (src/edge/oauth/upstream-connect.ts): any
// other form of the proxy (the member sign-in button) is submitted as it is, and every provider the proxy sends it to
// with PKCE (the team's IdP, an upstream's authorization server, harness/oauth-upstream.ts) is answered alike. Proxy URLs go to the caller's `proxy` function (the router in the
// workers pool, real fetch against `wrangler dev`), everything else to real fetch. Works in workerd and in Node.
import { CookieJar } from "../../harness/cookie-jar.ts";

export interface Member {
  /** The proxy's base URL as the pages name it (e.g. `http://localhost:8787`). */
  proxyOrigin: string;
  /** How a request to the proxy is answered. */
  proxy: (request: Request) => Promise<Response>;
  /** The IdP account to sign in as (typed into its form). */
  account: string;
  /** What to answer on the consent page; by default approve. */
  consent?: "approve" | "deny";
  /** Cancel at the IdP's sign-in form instead of signing in. */
  cancelAtIdp?: boolean;
  /** The jar to use (a second sign-in in the same browser); by default a new one. */
  jar?: CookieJar;
  /** Another account to type into the sign-in form of one provider (by origin); by default `account` everywhere. */
  accountAt?: Record<string, string>;
}

/** Where the browser ended: the host's redirect URI, or a page it stopped at (an error, an unexpected form). */
export type Outcome =
  | { kind: "redirect"; url: URL }
  | { kind: "page"; status: number; url: URL; text: string };

/** Every page and redirect seen, for tests that look at one step (the consent page's words, a cookie). */
export interface Trail {
  steps: { method: string; url: string; status: number; location?: string; body?: string; setCookies?: string[] }[];
  jar: CookieJar;
}

const MAX_STEPS = 20;
const STEP_TIMEOUT_MS = 10_000;

const unescapeHtml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e] ?? "");

/** A page's text, tags dropped, for assertions and error messages. */
export const pageText = (html: string): string =>
  unescapeHtml(
    html
      .replace(/<style[\s\S]*?<\/style>/g, " ")
      .replace(/<[^>]*>/g, " "),
  )
    .replace(/\s+/g, " ")
    .trim();

/** Follows an authorization URL of the proxy to its end. */
export async function signInAs(authorizeUrl: string, member: Member): Promise<Outcome & { trail: Trail }> {
  const jar = member.jar ?? new CookieJar();
  const trail: Trail = { steps: [], jar };
  let url = new URL(authorizeUrl);
  let method = "GET";
  let body: URLSearchParams | undefined;
  /** The providers the proxy sent the browser to: their pages are part of the flow. */
  const providers = new Set<string>();
  for (let n = 0; n < MAX_STEPS; n++) {
    const atProxy = url.origin === member.proxyOrigin;
    if (!atProxy && !providers.has(url.origin)) return { kind: "redirect", url, trail };
    const headers = new Headers({ accept: "text/html" });
    const cookie = jar.header(url);
    if (cookie) headers.set("cookie", cookie);
    if (body) headers.set("content-type", "application/x-www-form-urlencoded");
    // A browser names the page's origin on every POST (the dashboard's forms check it).
    if (atProxy && method === "POST") headers.set("origin", member.proxyOrigin);
    const request = new Request(url, { method, headers, ...(body ? { body } : {}), redirect: "manual", signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
    const res = atProxy ? await member.proxy(request) : await fetch(request);
    jar.store(url, res.headers.getSetCookie());
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location !== null) {
      await res.body?.cancel();
      trail.steps.push({ method, url: url.href, status: res.status, location });
      const next = new URL(location, url);
      // The proxy sends the browser to a provider (the team's IdP, an upstream's AS): from then on that origin is part
      // of the flow.
      if (atProxy && next.origin !== member.proxyOrigin && next.searchParams.has("code_challenge")) providers.add(next.origin);
      url = next;
      method = "GET";
      body = undefined;
      continue;
    }
    const html = await res.text();
    trail.steps.push({ method, url: url.href, status: res.status, body: html, setCookies: res.headers.getSetCookie() });
    if (res.status !== 200) return { kind: "page", status: res.status, url, text: pageText(html), trail };
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, "&");
    const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
    if (atProxy && action !== undefined && handle !== undefined) {
      url = new URL(action, url);
      method = "POST";
      body = new URLSearchParams({ handle, decision: member.consent ?? "approve" });
      continue;
    }
    if (atProxy && action !== undefined) {
      // Another form of the proxy (a connect link's member sign-in): its hidden fields, as a click sends them.
      url = new URL(action, url);
      method = "POST";
      body = new URLSearchParams([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)]));
      continue;
    }
    if (!atProxy && action !== undefined && html.includes('name="login"')) {
      if (member.cancelAtIdp) {
        const cancel = /<a href="([^"]+\/abort)"/.exec(html)?.[1];
        if (cancel === undefined) throw new Error("signInAs: the IdP's sign-in page has no cancel link");
        url = new URL(cancel, url);
        method = "GET";
        body = undefined;
      } else {
        url = new URL(action, url);
        method = "POST";
        body = new URLSearchParams({ login: member.accountAt?.[url.origin] ?? member.account });
      }
      continue;
    }
    return { kind: "page", status: res.status, url, text: pageText(html), trail };
  }
  throw new Error(`signInAs: more than ${MAX_STEPS} steps`);
}
