// A host in a process of its own, for tests whose clients must share nothing (no SDK instance, no connection pool, no
// memory): the v2 SDK client in its automatic mode connects to a proxy URL, lists the tools once, and prints one JSON
// line on stdout: the era it spoke, and the tools/list answer's message as it came over the wire (the data of its SSE
// message, or the JSON body).
//   node harness/list-tools.ts <mcp url> <bearer token>
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: node harness/list-tools.ts <mcp url> <bearer token>");
  process.exit(2);
}

let answer: Promise<string> | undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
  fetch: async (input, init) => {
    const response = await fetch(input, init);
    if (typeof init?.body === "string" && (JSON.parse(init.body) as { method?: string }).method === "tools/list") answer = response.clone().text();
    return response;
  },
});
const client = new Client({ name: "list-tools", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
await client.connect(transport);
await client.listTools();
const body = (await answer) ?? "";
const data = body.split("\n").find((line) => line.startsWith("data: "));
console.log(JSON.stringify({ era: client.getProtocolEra(), raw: data === undefined ? body : data.slice("data: ".length) }));
await client.close();
