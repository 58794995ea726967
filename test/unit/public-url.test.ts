// The proxy's public base URL on its own (src/lib/public-url.ts): OAuth's issuer and resource, and the links the proxy hands
// out, start with it; the routes that use it run in the workerd pool (test/workers/oauth-*.test.ts).
import { describe, expect, it } from "vitest";
import { publicBase, publicOrigin } from "../../src/lib/public-url.ts";

describe("public base URL", () => {
  const request = new Request("http://127.0.0.1:8787/t/acme/mcp");

  it("is PUBLIC_URL's origin when set, else the request's", () => {
    expect(publicBase({ PUBLIC_URL: "https://proxy.example/some/path" }, request)).toBe("https://proxy.example");
    expect(publicBase({}, request)).toBe("http://127.0.0.1:8787");
    expect(publicOrigin({})).toBeUndefined();
  });

  it("takes a malformed PUBLIC_URL as none", () => {
    expect(publicOrigin({ PUBLIC_URL: "not a url" })).toBeUndefined();
    expect(publicBase({ PUBLIC_URL: "not a url" }, request)).toBe("http://127.0.0.1:8787");
    // A change of the setting is read anew.
    expect(publicOrigin({ PUBLIC_URL: "https://other.example" })).toBe("https://other.example");
  });
});
