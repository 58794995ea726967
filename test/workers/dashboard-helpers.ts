// What the dashboard's pool tests share: a browser's requests to the Worker (an origin, a client address, the session
// cookie carried by hand), the sign-in, and reading a page's headers and figures.
import { expect } from "vitest";
import { BASE, workerFetch } from "./helpers.ts";

export const ADMIN_TOKEN = "test-admin-token";
export const COOKIE = "__Host-dynmcp-dashboard";

/** The headers every dashboard answer carries (src/edge/dashboard/page-headers.ts). */
export const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
};

export function expectPageHeaders(res: Response): void {
  for (const [name, value] of Object.entries(PAGE_HEADERS)) expect(res.headers.get(name), `${name} of ${res.url || "an answer"} (${res.status})`).toBe(value);
}

export interface BrowserOptions {
  /** CF-Connecting-IP: each test its own, so failed sign-ins of one never throttle another. */
  address: string;
  cookie?: string | undefined;
  /** The Origin header of a POST (the proxy's own by default; null: none sent). */
  origin?: string | null;
}

/** A GET as a browser sends it. */
export const getPage = (path: string, o: BrowserOptions): Promise<Response> =>
  workerFetch(`${BASE}${path}`, { headers: { "cf-connecting-ip": o.address, ...(o.cookie ? { cookie: `${COOKIE}=${o.cookie}` } : {}) }, redirect: "manual" });

/** A form POST as a browser sends it. */
export function postForm(path: string, form: Record<string, string>, o: BrowserOptions): Promise<Response> {
  const origin = o.origin === undefined ? BASE : o.origin;
  return workerFetch(`${BASE}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "cf-connecting-ip": o.address,
      ...(origin === null ? {} : { origin }),
      ...(o.cookie ? { cookie: `${COOKIE}=${o.cookie}` } : {}),
    },
    body: new URLSearchParams(form).toString(),
  });
}

/** The session cookie's Set-Cookie line of an answer, or undefined. */
export const sessionSetCookie = (res: Response): string | undefined => res.headers.getSetCookie().find((line) => line.startsWith(`${COOKIE}=`));

/** The cookie's value in a Set-Cookie line. */
export const cookieValue = (line: string): string => line.slice(COOKIE.length + 1).split(";")[0]!;

/** Signs in with the admin token; answers the session cookie's value. */
export async function signIn(address: string): Promise<string> {
  const res = await postForm("/dashboard/sign-in", { token: ADMIN_TOKEN }, { address });
  expect(res.status).toBe(303);
  const line = sessionSetCookie(res);
  expect(line).toBeDefined();
  return cookieValue(line!);
}

/** The CSRF token a signed-in page's forms carry. */
export function csrfOf(html: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  expect(token, "a CSRF field on the page").toBeDefined();
  return token!;
}

/** The overview's total `name` (its `data-total` cell), as a number when it is one. */
export function totalOf(html: string, name: string): string {
  const text = new RegExp(`data-total="${name}">([^<]*)<`).exec(html)?.[1];
  expect(text, `the total ${name}`).toBeDefined();
  return text!.replaceAll(",", "");
}

/** Text a page escaped, as the browser reads it (JSX escapes `<`, `>`, `"`, `'` and `&`). */
export const unescapeHtml = (html: string): string =>
  html.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&");

export { modernClient } from "./modern-client.ts";
