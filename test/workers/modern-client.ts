// A 2026-era client of a team through the Worker, as a host in its default (automatic) mode meets it: the v2 SDK
// client, its bearer token in the headers, checked to have negotiated the modern era. Closed by the caller.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { BASE, workerFetch } from "./helpers.ts";

export async function modernClient(team: string, token: string, query = ""): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp${query}`), {
    fetch: (input, init) => workerFetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "pool-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}
