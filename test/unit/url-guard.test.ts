// The SSRF guard: every notation of a forbidden address or name is refused, public upstreams pass, and
// ALLOW_PRIVATE_UPSTREAMS lifts only the address and https rules.
import { describe, expect, it } from "vitest";
import { checkUpstreamUrl, type UrlPolicy, type UrlVerdict } from "../../src/lib/url-guard.ts";

const strict: UrlPolicy = { allowPrivate: false, selfHosts: ["proxy.example.com"] };
const local: UrlPolicy = { allowPrivate: true, selfHosts: ["localhost:8787"] };

// Each row: [url, "ok" | a piece of text the refusal reason must contain].
type Row = readonly [url: string, expected: string];

const HTTPS = "upstream URLs must use https";
const USERINFO = "user:password@ in upstream URLs is not allowed: put credentials in headers as ${secret:NAME}";
const ADDR = "upstream URLs cannot point at loopback, private, link-local or other non-public addresses";
const META = "upstream URLs cannot point at cloud metadata addresses";
const NAME = "upstream URLs cannot point at local or internal host names";
const SELF = "upstream URLs cannot point at the proxy itself";
const INVALID = "upstream URL is not a valid absolute URL";

const refusedStrict: Record<string, readonly Row[]> = {
  "not a URL": [
    ["example.com/mcp", INVALID],
    ["", INVALID],
    ["https://", INVALID],
    ["https://256.0.0.1/", INVALID],
    ["https://1.2.3.4.5/", INVALID],
    ["https://[fe80::1%25eth0]/", INVALID],
  ],
  "scheme other than https": [
    ["http://example.com/mcp", `${HTTPS} (got http)`],
    ["HTTP://example.com/mcp", `${HTTPS} (got http)`],
    ["ftp://example.com/", `${HTTPS} (got ftp)`],
    ["ws://example.com/", `${HTTPS} (got ws)`],
    ["file:///etc/passwd", `${HTTPS} (got file)`],
    ["javascript:alert(1)", `${HTTPS} (got javascript)`],
    ["http://127.0.0.1/", HTTPS],
  ],
  userinfo: [
    ["https://alice:hunter2@example.com/mcp", USERINFO],
    ["https://alice@example.com/mcp", USERINFO],
    ["https://:hunter2@example.com/mcp", USERINFO],
    ["https://example.com@127.0.0.1/", USERINFO],
    ["https://example.com%2f@127.0.0.1/", USERINFO],
  ],
  "IPv4 loopback in every notation": [
    ["https://127.0.0.1/", `${ADDR} (127.0.0.1: loopback)`],
    ["https://127.0.0.1:8443/mcp", "(127.0.0.1: loopback)"],
    ["https://127.1.2.3/", "(127.1.2.3: loopback)"],
    ["https://2130706433/", "(127.0.0.1: loopback)"], // decimal
    ["https://0177.0.0.1/", "(127.0.0.1: loopback)"], // octal
    ["https://017700000001/", "(127.0.0.1: loopback)"], // octal, one number
    ["https://0x7f.0.0.1/", "(127.0.0.1: loopback)"], // hex
    ["https://0x7f000001/", "(127.0.0.1: loopback)"], // hex, one number
    ["https://0X7F.1/", "(127.0.0.1: loopback)"], // hex short, uppercase
    ["https://127.1/", "(127.0.0.1: loopback)"], // short
    ["https://127.0.1/", "(127.0.0.1: loopback)"], // short
    ["https://0177.0x0.0.1/", "(127.0.0.1: loopback)"], // mixed octal and hex
    ["https://127.0.0.1./", "(127.0.0.1: loopback)"], // trailing dot
    ["https://%31%32%37.0.0.1/", "(127.0.0.1: loopback)"], // percent-encoded
    ["https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "(127.0.0.1: loopback)"], // full-width digits
  ],
  "IPv4 private, CGNAT, unspecified, broadcast, multicast, reserved": [
    ["https://10.0.0.1/", "(10.0.0.1: private)"],
    ["https://10.1/", "(10.0.0.1: private)"],
    ["https://167772161/", "(10.0.0.1: private)"],
    ["https://172.16.0.1/", "(172.16.0.1: private)"],
    ["https://172.31.255.255/", "(172.31.255.255: private)"],
    ["https://192.168.1.1/", "(192.168.1.1: private)"],
    ["https://0xc0.0xa8.1.1/", "(192.168.1.1: private)"],
    ["https://169.254.1.1/", "(169.254.1.1: link-local)"],
    ["https://100.64.0.1/", "(100.64.0.1: carrier-grade NAT)"],
    ["https://100.127.255.254/", "(100.127.255.254: carrier-grade NAT)"],
    ["https://0.0.0.0/", "(0.0.0.0: unspecified)"],
    ["https://0/", "(0.0.0.0: unspecified)"],
    ["https://255.255.255.255/", "(255.255.255.255: broadcast)"],
    ["https://4294967295/", "(255.255.255.255: broadcast)"],
    ["https://224.0.0.1/", "(224.0.0.1: multicast)"],
    ["https://240.0.0.1/", "(240.0.0.1: reserved)"],
    ["https://192.0.2.1/", "(192.0.2.1: reserved)"],
  ],
  "cloud metadata addresses": [
    ["https://169.254.169.254/latest/meta-data/", `${META} (169.254.169.254)`],
    ["https://2852039166/", `${META} (169.254.169.254)`],
    ["https://0xa9.0xfe.0xa9.0xfe/", `${META} (169.254.169.254)`],
    ["https://100.100.100.200/", `${META} (100.100.100.200)`],
    ["https://[fd00:ec2::254]/", `${META} ([fd00:ec2::254])`],
    ["https://[FD00:EC2:0:0:0:0:0:254]/", `${META} ([fd00:ec2::254])`],
    ["https://[::ffff:169.254.169.254]/", `${META} ([::ffff:a9fe:a9fe] embeds 169.254.169.254)`],
    ["https://[2002:a9fe:a9fe::1]/", `${META} ([2002:a9fe:a9fe::1] embeds 169.254.169.254)`],
  ],
  "IPv6 literals": [
    ["https://[::1]/", `${ADDR} ([::1]: loopback)`],
    ["https://[0:0:0:0:0:0:0:1]:8443/", "([::1]: loopback)"],
    ["https://[::]/", "([::]: unspecified)"],
    ["https://[fe80::1]/", "([fe80::1]: link-local)"],
    ["https://[febf::1]/", "([febf::1]: link-local)"],
    ["https://[fc00::1]/", "([fc00::1]: unique-local)"],
    ["https://[fd12:3456::1]/", "([fd12:3456::1]: unique-local)"],
    ["https://[fec0::1]/", "([fec0::1]: deprecated site local)"],
    ["https://[ff02::1]/", "([ff02::1]: multicast)"],
    ["https://[2001:db8::1]/", "([2001:db8::1]: reserved)"],
    ["https://[100::1]/", "([100::1]: discard)"],
    ["https://[4000::1]/", "([4000::1]: outside global unicast 2000::/3)"],
    ["https://[1::1]/", "([1::1]: outside global unicast 2000::/3)"],
  ],
  "IPv6 forms embedding an IPv4 address": [
    ["https://[::ffff:127.0.0.1]/", "([::ffff:7f00:1] embeds 127.0.0.1: loopback)"], // IPv4-mapped, dotted
    ["https://[::ffff:7f00:1]/", "([::ffff:7f00:1] embeds 127.0.0.1: loopback)"], // IPv4-mapped, hex
    ["https://[0:0:0:0:0:ffff:7f00:1]/", "([::ffff:7f00:1] embeds 127.0.0.1: loopback)"], // IPv4-mapped, full
    ["https://[::FFFF:10.0.0.1]/", "([::ffff:a00:1] embeds 10.0.0.1: private)"],
    ["https://[::127.0.0.1]/", "([::7f00:1] embeds 127.0.0.1: loopback)"], // IPv4-compatible
    ["https://[::ffff:0:7f00:1]/", "([::ffff:0:7f00:1] embeds 127.0.0.1: loopback)"], // IPv4-translated
    ["https://[64:ff9b::127.0.0.1]/", "([64:ff9b::7f00:1] embeds 127.0.0.1: loopback)"], // NAT64
    ["https://[2002:7f00:1::]/", "([2002:7f00:1::] embeds 127.0.0.1: loopback)"], // 6to4
    ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "embeds 127.0.0.1: loopback)"], // Teredo, client 127.0.0.1
    // Even with a public IPv4 inside, these are no way to name an upstream.
    ["https://[::ffff:8.8.8.8]/", "([::ffff:808:808]: IPv4-mapped)"],
    ["https://[::8.8.8.8]/", "([::808:808]: IPv4-compatible)"],
    ["https://[64:ff9b::8.8.8.8]/", "([64:ff9b::808:808]: NAT64)"],
    ["https://[2002:808:808::1]/", "([2002:808:808::1]: 6to4)"],
  ],
  "local and internal host names": [
    ["https://localhost/", `${NAME} (localhost)`],
    ["https://LOCALHOST:8443/", `${NAME} (localhost)`],
    ["https://localhost./", `${NAME} (localhost)`],
    ["https://localhost../", `${NAME} (localhost)`],
    ["https://%6c%6fcalhost/", `${NAME} (localhost)`],
    ["https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", `${NAME} (localhost)`], // full-width letters
    ["https://localhost\u3002/", `${NAME} (localhost)`], // ideographic full stop
    ["https://api.localhost/", `${NAME} (api.localhost)`],
    ["https://metadata.google.internal/computeMetadata/v1/", `${NAME} (metadata.google.internal)`],
    ["https://METADATA.Google.Internal./", `${NAME} (metadata.google.internal)`],
    ["https://db.corp.internal/", `${NAME} (db.corp.internal)`],
    ["https://printer.local/", `${NAME} (printer.local)`],
    ["https://router.home.arpa/", `${NAME} (router.home.arpa)`],
    ["https://metadata/", "upstream URLs need a fully qualified public host name (metadata)"],
  ],
  "the proxy's own host": [
    ["https://proxy.example.com/mcp", `${SELF} (proxy.example.com)`],
    ["https://PROXY.example.com.:8443/mcp", `${SELF} (proxy.example.com.:8443)`],
  ],
};

const allowedStrict: readonly string[] = [
  "https://example.com/mcp",
  "https://api.github.com/mcp",
  "https://mcp.example.com:8443/sse?x=1#frag",
  "https://EXAMPLE.com./mcp",
  "https://@example.com/mcp", // empty userinfo: the parser drops it, nothing is sent
  "https://8.8.8.8/",
  "https://1.1.1.1/mcp",
  "https://134744072/", // 8.8.8.8 in decimal: notation does not decide, the address does
  "https://172.32.0.1/", // just past 172.16/12
  "https://100.128.0.1/", // just past 100.64/10
  "https://192.169.0.1/",
  "https://11.0.0.1/",
  "https://[2606:4700:4700::1111]/",
  "https://[2001:4860:4860::8888]:443/mcp",
  "https://localhost.example.com/", // suffixes are matched on label boundaries
  "https://internal.example.com/",
  "https://xn--bcher-kva.example/",
  "https://proxy.example.com.evil.test/",
  "https://other.example.com/",
  // DNS is out of scope: this public name resolves to 127.0.0.1, which only a resolver-level check can catch.
  "https://127.0.0.1.nip.io/",
];

function reasonOf(verdict: UrlVerdict): string {
  return verdict.ok ? "(allowed)" : verdict.reason;
}

describe("checkUpstreamUrl, strict policy", () => {
  for (const [group, rows] of Object.entries(refusedStrict)) {
    describe(`refuses: ${group}`, () => {
      it.each(rows)("%s", (url, expected) => {
        const verdict = checkUpstreamUrl(url, strict);
        expect(verdict.ok, `expected ${url} to be refused`).toBe(false);
        expect(reasonOf(verdict)).toContain(expected);
      });
    });
  }

  it.each(allowedStrict)("allows %s", (url) => {
    expect(checkUpstreamUrl(url, strict)).toEqual({ ok: true });
  });

  it("never echoes credentials in a reason", () => {
    for (const url of ["https://alice:hunter2@example.com/", "http://alice:hunter2@example.com/", "ftp://alice:hunter2@example.com/", "https://alice:hunter2@[::1/"]) {
      for (const policy of [strict, local]) {
        const verdict = checkUpstreamUrl(url, policy);
        expect(verdict.ok).toBe(false);
        expect(reasonOf(verdict)).not.toContain("hunter2");
        expect(reasonOf(verdict)).not.toContain("alice");
      }
    }
  });

  it("refuses everything private without a selfHosts list too", () => {
    expect(checkUpstreamUrl("https://127.0.0.1/", { allowPrivate: false }).ok).toBe(false);
    expect(checkUpstreamUrl("https://proxy.example.com/", { allowPrivate: false })).toEqual({ ok: true });
  });
});

describe("checkUpstreamUrl, ALLOW_PRIVATE_UPSTREAMS", () => {
  const allowed = [
    "http://127.0.0.1:3001/mcp",
    "http://localhost:3001/mcp",
    "http://LOCALHOST.:3001/mcp",
    "http://[::1]:3001/mcp",
    "http://2130706433:3001/",
    "https://10.0.0.5/mcp",
    "http://192.168.1.10/",
    "http://example.com/mcp",
    "https://example.com/mcp",
    "http://metadata.google.internal/",
  ];
  it.each(allowed)("allows %s", (url) => {
    expect(checkUpstreamUrl(url, local)).toEqual({ ok: true });
  });

  const refused: readonly Row[] = [
    ["http://alice:hunter2@127.0.0.1:3001/", USERINFO],
    ["https://alice@localhost/", USERINFO],
    ["ftp://127.0.0.1/", "upstream URLs must use http or https (got ftp)"],
    ["ws://localhost:3001/", "upstream URLs must use http or https (got ws)"],
    ["file:///etc/passwd", "upstream URLs must use http or https (got file)"],
    ["http://localhost:8787/mcp", `${SELF} (localhost:8787)`],
    ["http://LOCALHOST.:8787/mcp", SELF],
    ["not a url", INVALID],
  ];
  it.each(refused)("refuses %s", (url, expected) => {
    const verdict = checkUpstreamUrl(url, local);
    expect(verdict.ok).toBe(false);
    expect(reasonOf(verdict)).toContain(expected);
  });
});

describe("selfHosts matching", () => {
  const cases: readonly (readonly [selfHost: string, url: string, isSelf: boolean])[] = [
    ["proxy.example.com", "https://proxy.example.com:8443/", true], // no port: any port
    ["proxy.example.com:443", "https://proxy.example.com/", true], // default port counts
    ["proxy.example.com:443", "https://proxy.example.com:8443/", false],
    ["https://proxy.example.com", "https://proxy.example.com/mcp", true], // an origin works too
    ["http://localhost:8787", "http://localhost:8787/", true],
    ["localhost:8787", "http://localhost:3001/", false],
    ["proxy.example.com", "https://sub.proxy.example.com/", false],
  ];
  it.each(cases)("%s vs %s", (selfHost, url, isSelf) => {
    const verdict = checkUpstreamUrl(url, { allowPrivate: true, selfHosts: [selfHost] });
    expect(verdict.ok).toBe(!isSelf);
    if (isSelf) expect(reasonOf(verdict)).toContain(SELF);
  });
});

