// Just enough of a browser's cookie store for a sign-in driven over HTTP: cookies by name and path, dropped when the
// server expires them. Pure (no Node or Workers API), so the workers tests and the Node fixtures share it. Loopback
// and test hosts only: no domain matching and no `Secure` handling (the proxy's `__Host-` cookies are sent back to
// the origin that set them, as a browser does on https or on localhost).
export class CookieJar {
  private readonly cookies = new Map<string, { origin: string; name: string; value: string; path: string }>();

  /** Takes the `Set-Cookie` lines of a response to `url`. */
  store(url: URL, setCookies: readonly string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = url.pathname.replace(/\/[^/]*$/, "") || "/";
      let expired = value === "";
      for (const attribute of attributes) {
        const [key = "", val = ""] = attribute.split("=", 2).map((s) => s.trim());
        const lower = key.toLowerCase();
        if (lower === "path" && val.startsWith("/")) path = val;
        if (lower === "max-age" && Number(val) <= 0) expired = true;
        if (lower === "expires" && Date.parse(val) <= Date.now()) expired = true;
      }
      const id = `${url.origin}\n${name}\n${path}`;
      if (expired) this.cookies.delete(id);
      else this.cookies.set(id, { origin: url.origin, name, value, path });
    }
  }

  /** The `Cookie` header for a request to this URL (its origin's cookies, RFC 6265 path matching, longest paths first). */
  header(url: URL): string {
    const matches = (path: string) =>
      url.pathname === path || (url.pathname.startsWith(path) && (path.endsWith("/") || url.pathname[path.length] === "/"));
    return [...this.cookies.values()]
      .filter((c) => c.origin === url.origin && matches(c.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }

  /** How many cookies are held for an origin (tests of what a step set). */
  count(origin: string): number {
    return [...this.cookies.values()].filter((c) => c.origin === origin).length;
  }
}
