// The frame of every dashboard page: the document, its one stylesheet (a static asset: no inline style, no script),
// the header with the sign-out form when signed in, and the page's content. Rendered by Hono's JSX, which escapes every
// value it is given: nothing here writes raw HTML, so a name an upstream or a team chose is only ever text. The first
// thing a keyboard reaches is "Skip to content" (shown only while focused), which moves focus past the header to <main>.
import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "./csrf.ts";

/** Where the stylesheet is served (src/edge/dashboard/dashboard-routes.ts; the file is assets/dashboard/dashboard.css). */
export const STYLESHEET_PATH = "/dashboard/dashboard.css";

export interface LayoutProps {
  title: string;
  /** The signed-in session's CSRF token (its sign-out form carries it); absent on the sign-in form and its errors. */
  csrf?: string | undefined;
  /** The dashboard the header's links go to: the operator's (`/dashboard`, the default) or a team's own (`/t/<team>/dashboard`). */
  home?: string | undefined;
  /** A same-origin path the browser goes on to at once (a refresh, which the CSP allows: no script). */
  refresh?: string | undefined;
  children?: Child;
}

export function Layout({ title, csrf, home = "/dashboard", refresh, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · dynmcp-edge`}</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        {/* No icon to fetch: without one a browser asks for /favicon.ico, outside the dashboard. */}
        <link rel="icon" href="data:," />
        {refresh === undefined ? null : <meta http-equiv="refresh" content={`0; url=${refresh}`} />}
      </head>
      <body>
        <a class="skip" href="#content">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href={home}>
            dynmcp-edge
          </a>
          {csrf === undefined ? null : (
            <form method="post" action={`${home}/sign-out`} class="sign-out">
              <input type="hidden" name={CSRF_FIELD} value={csrf} />
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        {/* tabindex -1: the skip link's target takes focus (so the next Tab goes on from there), yet is no Tab stop. */}
        <main id="content" tabindex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A page that only says something (an unknown team, a refused form, a disabled dashboard). */
export function MessagePage({ title, message, csrf, home = "/dashboard" }: { title: string; message: string; csrf?: string | undefined; home?: string | undefined }) {
  return (
    <Layout title={title} csrf={csrf} home={home}>
      <p role="alert">{message}</p>
      <p>
        <a href={home}>Back to the dashboard</a>
      </p>
    </Layout>
  );
}
