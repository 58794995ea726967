// The pages a member sees while a host signs them in: the consent page and the local error page, and the redirect
// that sends the browser on. Plain HTML with no script, every value escaped (client names and URIs are the client's
// own words), never framed, never cached.
import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { grantedScopes } from "./server.ts";
import { shownClientName } from "./client-name.ts";

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}" +
  "code{background:#f2f2f2;padding:0 .25em;border-radius:3px}.warn{background:#fff4e5;border-left:4px solid #f0a020;padding:.5rem .75rem}" +
  "button{font:inherit;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:6px;border:1px solid #888;cursor:pointer}" +
  "button[value=approve]{background:#1d4ed8;color:#fff;border-color:#1d4ed8}";

/** The page's own policy: no script, no loads, inline style only, no framing, forms back to this origin. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; frame-ancestors 'none'; base-uri 'none'";

/** A page response; `headers` (the OAuth library's binding cookies) are kept, its CSP replaced by the fuller one. */
export function htmlPage(status: number, title: string, body: string, headers: Headers = new Headers()): Response {
  const out = new Headers(headers);
  out.set("content-type", "text/html; charset=utf-8");
  out.set("cache-control", "no-store");
  out.set("content-security-policy", CSP);
  out.set("x-frame-options", "DENY");
  out.set("referrer-policy", "no-referrer");
  const html =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
  return new Response(html, { status, headers: out });
}

/** The browser sent on to `location` (302, never cached); `headers` (cookies) are kept. */
export function redirect(location: string, headers: Headers = new Headers()): Response {
  const out = new Headers(headers);
  out.set("location", location);
  out.set("cache-control", "no-store");
  return new Response(null, { status: 302, headers: out });
}

/** A step that cannot go on and must not send the browser anywhere (no client redirect was validated). */
export const errorPage = (status: number, title: string, message: string, headers?: Headers): Response =>
  htmlPage(status, title, `<p role="alert">${escapeHtml(message)}</p>`, headers);

/** What the consent page says about the team: its name and the upstreams a host would reach. */
export interface ConsentTeam {
  team: string;
  upstreams: { name: string; description?: string }[];
}

/** Scopes in words a member understands. */
const SCOPE_WORDS: Record<string, string> = {
  mcp: "use the team's MCP tools, resources and prompts as you",
  offline_access: "stay signed in (refresh its access) until you revoke it",
};

/**
 * The consent page: who asks (the client's name, its verified domain for a metadata-document client, else a note
 * that the name is its own claim), where the tokens go (the redirect host, with a warning for a local app), what it
 * may do, and what it reaches. The name is shown without the characters that could disguise it
 * (src/edge/oauth/client-name.ts), isolated (`<bdi>`) so that a right-to-left name cannot reorder the words around it, with
 * a warning when any were removed. The form posts the handle back with the member's decision.
 */
export function consentPage(action: string, handle: string, client: ConsentDescription, team: ConsentTeam, headers: Headers): Response {
  const name = shownClientName(client.clientName, client.clientId);
  const shown = `<strong><bdi>${escapeHtml(name.text)}</bdi></strong>`;
  const who = client.clientDomain
    ? `${shown} (verified domain <code>${escapeHtml(client.clientDomain)}</code>)`
    : `${shown} <small>(a name the application gave itself)</small>`;
  const disguised = name.altered
    ? '<p class="warn">The application\'s name held invisible characters that can make it read as another name; they are removed above. ' +
      "Allow only if you know this application.</p>"
    : "";
  const scopes = grantedScopes(client.scope);
  const upstreams =
    team.upstreams.length === 0
      ? "<p>The team has no MCP servers configured yet.</p>"
      : `<p>Through it the application reaches these MCP servers:</p><ul>${team.upstreams
          .map((u) => `<li><code>${escapeHtml(u.name)}</code>${u.description ? `: ${escapeHtml(u.description)}` : ""}</li>`)
          .join("")}</ul>`;
  const loopback = client.redirectIsLoopback
    ? `<p class="warn">The answer goes to an application on this computer (<code>${escapeHtml(client.redirectHost)}</code>). ` +
      "Any program running here could be listening there: allow only if you just started this sign-in.</p>"
    : "";
  const body =
    `<p>${who} asks to sign you in to the MCP server of team <code>${escapeHtml(team.team)}</code>.</p>` +
    disguised +
    `<p>It will be able to:</p><ul>${scopes.map((s) => `<li>${escapeHtml(SCOPE_WORDS[s] ?? s)}</li>`).join("")}</ul>` +
    upstreams +
    `<p>Access is sent to <code>${escapeHtml(client.redirectHost)}</code>.</p>` +
    loopback +
    `<form method="post" action="${escapeHtml(action)}">` +
    `<input type="hidden" name="handle" value="${escapeHtml(handle)}">` +
    `<button type="submit" name="decision" value="approve">Allow</button>` +
    `<button type="submit" name="decision" value="deny">Deny</button></form>` +
    "<p><small>Next you sign in with your team's identity provider.</small></p>";
  return htmlPage(200, `Allow ${name.text}?`, body, headers);
}

/**
 * A connect link that must know which member opens it (a member's own account at an upstream): why, and a button that
 * signs the member in at the team's identity provider and comes back to the link.
 */
export function memberSignInPage(action: string, handle: string, team: string, message: string): Response {
  const body =
    `<p>${escapeHtml(message)}</p>` +
    `<form method="post" action="${escapeHtml(action)}">` +
    `<input type="hidden" name="h" value="${escapeHtml(handle)}">` +
    `<button type="submit">Sign in with ${escapeHtml(team)}'s identity provider</button></form>`;
  return htmlPage(200, "Sign in to connect", body);
}

/** The end of a connect: which server, for whom; never a token. */
export function connectedPage(team: string, server: string, shared: boolean, headers?: Headers): Response {
  const whose = shared ? "the team's shared account" : "your account";
  const body =
    `<p>Connected <code>${escapeHtml(server)}</code> for team <code>${escapeHtml(team)}</code> (${whose}); ` +
    "you can close this window and retry the call.</p>";
  return htmlPage(200, `Connected ${server}`, body, headers);
}
