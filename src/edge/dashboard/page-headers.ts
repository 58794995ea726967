// The headers every dashboard response carries, the sign-in form, errors and the stylesheet included: a policy that
// lets the page load nothing but its own stylesheet (no script at all, no inline style: every value on a page is
// escaped text, and even an injected tag could not run or restyle it), never framed (clickjacking), never cached (a
// signed-in page must not outlive its session in a cache), no referrer sent to another site, no type sniffing.
import type { MiddlewareHandler } from "hono";

/**
 * `form-action 'self'`: a form posts only back to the proxy; `img-src data:` lets the pages name an empty icon (else
 * a browser asks for /favicon.ico); the charts are inline SVG elements, which no fetch directive governs.
 */
export const dashboardCsp = (formTargets: readonly string[] = []): string =>
  `default-src 'none'; style-src 'self'; img-src 'self' data:; form-action ${["'self'", ...formTargets].join(" ")}; frame-ancestors 'none'; base-uri 'none'`;
export const DASHBOARD_CSP = dashboardCsp();

/**
 * Where a page's form may go on to besides the proxy, as the route names it on its answer (removed before it is
 * sent): `form-action` governs the redirects after a form's POST too, so the team admins' sign-in button, whose POST
 * is answered with a redirect to the team's identity provider, needs that provider's origin. An origin, nothing else.
 */
export const FORM_TARGET_HEADER = "x-dashboard-form-target";
const ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(?::\d{1,5})?$/;

/**
 * `same-origin` rather than `no-referrer`: under `no-referrer` a browser sends `Origin: null` with a form's POST (the
 * Fetch standard's request-origin rule), and the CSRF check needs the real origin. Another site is still sent nothing.
 */
export const DASHBOARD_REFERRER_POLICY = "same-origin";

export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": DASHBOARD_CSP,
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": DASHBOARD_REFERRER_POLICY,
  "x-content-type-options": "nosniff",
};

/** Sets the headers on whatever the dashboard's route answered (a fetched asset's are copied first: they are immutable). */
export const pageHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const res = new Response(c.res.body, c.res);
  const target = res.headers.get(FORM_TARGET_HEADER);
  res.headers.delete(FORM_TARGET_HEADER);
  for (const [name, value] of Object.entries(DASHBOARD_HEADERS)) res.headers.set(name, value);
  if (target !== null && ORIGIN.test(target)) res.headers.set("content-security-policy", dashboardCsp([target]));
  c.res = undefined;
  c.res = res;
};
