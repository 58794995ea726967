// SSRF guard for upstream URLs: pure, no I/O, the same in the Worker and in Node.
//
// How a URL is judged:
// 1. The WHATWG URL parser (the global `URL`, the same parser `fetch` uses) reads it. For http and https it
//    already lowercases the host, decodes percent-encoding, applies IDNA mapping (full-width digits, `。`),
//    turns every IPv4 notation (decimal `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, a
//    trailing dot) into dotted decimal, rejects malformed numbers (`256.0.0.1`) and zone ids, and writes IPv6
//    in its compressed form (`[::ffff:7f00:1]`). We judge its result, never the raw string, so there is no
//    second parser to disagree with. Callers must connect to the URL they checked (or its `href`).
// 2. IP literals are classified with ipaddr.js. Only its `unicast` range passes (IPv6 additionally only
//    inside 2000::/3, the global unicast block: ipaddr.js has no range for the deprecated IPv4-compatible
//    `::a.b.c.d` block and calls it unicast).
// 3. Host names that are not IP literals pass unless they are on the deny list below.
//
// Out of scope: DNS. A public name may resolve to a private address (`127.0.0.1.nip.io`, DNS rebinding);
// catching that needs the resolved address at connect time, which a Worker's `fetch` does not expose.
import ipaddr from "ipaddr.js";

export interface UrlPolicy {
  /** Lifts the address rules (loopback, private, internal names) and the https rule: local development and tests only. */
  allowPrivate: boolean;
  /**
   * The proxy's own host(s), never allowed as an upstream. An entry without a port (`proxy.example.com`)
   * matches that host on any port; an entry with a port (`localhost:8787`) matches only that port, so that in
   * local development the proxy on localhost:8787 can still reach an upstream on localhost:3001.
   * Checked whether or not `allowPrivate` is set.
   */
  selfHosts?: readonly string[];
}

export type UrlVerdict = { ok: true } | { ok: false; reason: string };

const OK: UrlVerdict = { ok: true };
const refuse = (reason: string): UrlVerdict => ({ ok: false, reason });

const ADDRESS_REASON = "upstream URLs cannot point at loopback, private, link-local or other non-public addresses";

// Well-known cloud metadata endpoints (AWS/GCP/Azure/OpenStack IPv4, AWS IPv6, Alibaba). All of them also
// fall in a refused range; listing them only gives a clearer reason.
const METADATA_ADDRESSES = new Set(["169.254.169.254", "fd00:ec2::254", "100.100.100.200"]);

// Exact names and suffixes that only ever mean "this machine" or "this network".
const DENIED_NAMES = new Set(["localhost", "metadata.google.internal"]);
const DENIED_SUFFIXES = [".localhost", ".internal", ".local", ".localdomain", ".home.arpa"];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR("2000::/3");

/** Checks an upstream URL before it is stored and before every connect. */
export function checkUpstreamUrl(url: string, policy: UrlPolicy): UrlVerdict {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The input is not echoed: it may carry credentials.
    return refuse("upstream URL is not a valid absolute URL");
  }

  const scheme = parsed.protocol;
  if (policy.allowPrivate) {
    if (scheme !== "https:" && scheme !== "http:") return refuse(`upstream URLs must use http or https (got ${scheme.slice(0, -1)})`);
  } else if (scheme !== "https:") {
    return refuse(`upstream URLs must use https (got ${scheme.slice(0, -1)})`);
  }

  if (parsed.username !== "" || parsed.password !== "") {
    return refuse("user:password@ in upstream URLs is not allowed: put credentials in headers as ${secret:NAME}");
  }

  const host = parsed.hostname;
  const name = host.replace(/\.+$/, "");

  if (isSelfHost(parsed, name, policy.selfHosts ?? [])) {
    return refuse(`upstream URLs cannot point at the proxy itself (${parsed.host})`);
  }

  if (policy.allowPrivate) return OK;

  if (host.startsWith("[") && host.endsWith("]")) {
    return checkIPv6(host.slice(1, -1), host);
  }
  // WHATWG has already turned any numeric host into dotted decimal; ipaddr.js's own lenient IPv4 parser is
  // a second net in case a runtime's URL parser ever left a numeric form alone.
  if (ipaddr.IPv4.isValid(name)) {
    return checkIPv4(ipaddr.IPv4.parse(name));
  }
  return checkHostName(name);
}

function checkIPv4(addr: ipaddr.IPv4, via?: string): UrlVerdict {
  const text = addr.toString();
  const where = via === undefined ? text : `${via} embeds ${text}`;
  if (METADATA_ADDRESSES.has(text)) return refuse(`upstream URLs cannot point at cloud metadata addresses (${where})`);
  const range = addr.range();
  return range === "unicast" ? OK : refuse(`${ADDRESS_REASON} (${where}: ${rangeLabel(range)})`);
}

function checkIPv6(literal: string, shown: string): UrlVerdict {
  let addr: ipaddr.IPv6;
  try {
    addr = ipaddr.IPv6.parse(literal);
  } catch {
    return refuse(`upstream URL host is not a valid IPv6 address (${shown})`);
  }
  if (METADATA_ADDRESSES.has(addr.toString())) return refuse(`upstream URLs cannot point at cloud metadata addresses (${shown})`);

  // Forms that carry an IPv4 address are judged first by that address: it is what the request would reach.
  const embedded = embeddedIPv4(addr);
  if (embedded !== undefined) {
    const inner = checkIPv4(embedded, shown);
    if (!inner.ok) return inner;
  }

  // Then by the IPv6 address itself: a mapped, NAT64, 6to4 or Teredo form of a public IPv4 address is
  // still refused (none of them is a sane way to name an upstream).
  const range = addr.range();
  if (range === "unicast" && addr.match(GLOBAL_UNICAST_V6)) return OK;
  const label = embedded !== undefined && range === "unicast" ? "IPv4-compatible" : range === "unicast" ? "outside global unicast 2000::/3" : rangeLabel(range);
  return refuse(`${ADDRESS_REASON} (${shown}: ${label})`);
}

/** The IPv4 address inside IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4 and Teredo forms. */
function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = addr.range();
  const p = addr.parts;
  const fromWords = (hi: number | undefined, lo: number | undefined): ipaddr.IPv4 =>
    new ipaddr.IPv4([((hi ?? 0) >> 8) & 0xff, (hi ?? 0) & 0xff, ((lo ?? 0) >> 8) & 0xff, (lo ?? 0) & 0xff]);
  switch (range) {
    case "ipv4Mapped":
      return addr.toIPv4Address();
    case "rfc6145": // ::ffff:0:a.b.c.d
    case "rfc6052": // 64:ff9b::a.b.c.d (NAT64)
      return fromWords(p[6], p[7]);
    case "6to4": // 2002:AABB:CCDD::/48
      return fromWords(p[1], p[2]);
    case "teredo": {
      // 2001:0:<server v4>:<flags>:<port ^ 0xffff>:<client v4 ^ 0xffffffff>; the client address is the one reached.
      return fromWords((p[6] ?? 0) ^ 0xffff, (p[7] ?? 0) ^ 0xffff);
    }
    default:
      // IPv4-compatible ::a.b.c.d (deprecated, RFC 4291): ipaddr.js calls it unicast (:: and ::1 have their own ranges).
      if (range === "unicast" && p.slice(0, 6).every((w) => w === 0)) return fromWords(p[6], p[7]);
      return undefined;
  }
}

function rangeLabel(range: string): string {
  switch (range) {
    case "linkLocal":
      return "link-local";
    case "carrierGradeNat":
      return "carrier-grade NAT";
    case "uniqueLocal":
      return "unique-local";
    case "ipv4Mapped":
      return "IPv4-mapped";
    case "rfc6145":
      return "IPv4-translated";
    case "rfc6052":
      return "NAT64";
    case "6to4":
      return "6to4";
    case "teredo":
      return "Teredo";
    default:
      return range.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  }
}

function checkHostName(name: string): UrlVerdict {
  if (DENIED_NAMES.has(name) || DENIED_SUFFIXES.some((s) => name.endsWith(s))) {
    return refuse(`upstream URLs cannot point at local or internal host names (${name})`);
  }
  // A single-label name (`metadata`, `intranet`) resolves through the local search domain, never publicly.
  if (!name.includes(".")) {
    return refuse(`upstream URLs need a fully qualified public host name (${name})`);
  }
  return OK;
}

function isSelfHost(url: URL, name: string, selfHosts: readonly string[]): boolean {
  for (const entry of selfHosts) {
    let self: URL;
    try {
      self = new URL(entry.includes("://") ? entry : `https://${entry}`);
    } catch {
      continue;
    }
    if (self.hostname.replace(/\.+$/, "") !== name) continue;
    // An explicit port in the entry narrows the match to that port (`https://` default ports count as explicit).
    const hasPort = self.port !== "" || /:\d+\/?$/.test(entry);
    if (!hasPort) return true;
    if (effectivePort(self) === effectivePort(url)) return true;
  }
  return false;
}

function effectivePort(url: URL): string {
  if (url.port !== "") return url.port;
  return url.protocol === "http:" ? "80" : "443";
}
