// An upstream that tells back the headers it was sent, everywhere an MCP server can put text: its instructions and
// server info, tool definitions (description, an input property's description, the output schema's), tool results
// (text, structured content, a resource link, an image, an embedded blob, `_meta`; plain, refused and thrown), log
// and progress notifications, elicitation and sampling requests (a 2026 `input_required` round, a 2025 session's
// request), resources and templates (list, read as text and as a blob, a failing read), prompts (list, get, a
// failing get) and completions. Some of it as is, some percent-encoded or base64, and the header values also as
// object keys. The security tests connect the proxy to it and look for the team's secret in whatever comes back.
import { McpServer, ResourceTemplate, completable, inputRequired } from "@modelcontextprotocol/server";
import * as z from "zod";
import { startModernUpstream, type ModernUpstream, type UpstreamEra } from "./modern-upstream.ts";

/** The headers the fixture tells back: the configured ones (Authorization, `x-…`) first, then the rest. */
function echoedHeaders(request: Request | undefined): Array<[string, string]> {
  const all: Array<[string, string]> = [];
  request?.headers.forEach((value, name) => void all.push([name, value]));
  const configured = (name: string) => name === "authorization" || name.startsWith("x-");
  return [...all.filter(([name]) => configured(name)), ...all.filter(([name]) => !configured(name))];
}

const base64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/** One instance of the fixture's server, built from the request that starts its session (2025) or request (2026). */
export function echoServer(request: Request | undefined): McpServer {
  const headers = echoedHeaders(request);
  const said = headers.map(([name, value]) => `${name}: ${value}`).join("; ");
  /** The values as keys, the names as values: text an upstream may put where a proxy would not look. */
  const byValue = Object.fromEntries(headers.map(([name, value]) => [value, name]));
  const server = new McpServer(
    { name: "echo", version: "1.0.0", title: `Echo of ${said}`, description: said },
    { capabilities: { tools: {}, resources: {}, prompts: {}, logging: {}, completions: {} }, instructions: `I was sent ${said}` },
  );

  server.registerTool(
    "echo_headers",
    {
      description: `Tells back the headers it was sent: ${said}`,
      inputSchema: z.object({ note: z.string().optional().describe(`Anything; the headers were ${said}`) }),
      outputSchema: z.object({ headers: z.record(z.string(), z.string()).describe(`Sent: ${said}`), byValue: z.record(z.string(), z.string()) }),
    },
    async () => ({
      content: [
        { type: "text", text: `You sent ${said}` },
        { type: "text", text: JSON.stringify({ headers: Object.fromEntries(headers) }) },
        { type: "resource_link", uri: `echo://sent?headers=${encodeURIComponent(said)}`, name: `sent ${said}` },
        { type: "image", data: base64(said), mimeType: "image/png" },
        { type: "resource", resource: { uri: "echo://sent.bin", mimeType: "application/octet-stream", blob: base64(said) } },
      ],
      structuredContent: { headers: Object.fromEntries(headers), byValue },
      _meta: { said, byValue },
    }),
  );
  server.registerTool("echo_refusal", { description: "Refuses, saying what it was sent.", inputSchema: z.object({}) }, async () => ({
    content: [{ type: "text", text: `Refused; you sent ${said}` }],
    isError: true,
  }));
  server.registerTool("echo_failure", { description: "Throws, saying what it was sent.", inputSchema: z.object({}) }, async () => {
    throw new Error(`failed; you sent ${said}`);
  });
  server.registerTool("echo_log", { description: "Logs and reports progress with what it was sent.", inputSchema: z.object({}) }, async (_args, ctx) => {
    await ctx.mcpReq.log("warning", { said, byValue }, `logger ${said}`);
    const token = ctx.mcpReq._meta?.progressToken;
    if (token !== undefined) await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2, message: said } });
    return { content: [{ type: "text", text: "logged" }] };
  });
  server.registerTool("echo_ask", { description: "Asks the user, then the model, about what it was sent.", inputSchema: z.object({}) }, async (_args, ctx) => {
    const responses = ctx.mcpReq.inputResponses ?? {};
    if (!("confirm" in responses) || !("sample" in responses)) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Was I sent ${said}?`,
            requestedSchema: { type: "object", properties: { ok: { type: "boolean", description: said } }, required: ["ok"] },
          }),
          sample: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: `Say something about ${said}` } }],
            systemPrompt: `You know ${said}`,
            maxTokens: 10,
          }),
        },
      });
    }
    return { content: [{ type: "text", text: `asked about ${said}` }] };
  });

  server.registerResource("sent", "echo://sent", { description: `The headers: ${said}`, title: said, mimeType: "text/plain" }, async (uri) => ({
    contents: [
      { uri: uri.href, mimeType: "text/plain", text: said },
      { uri: `${uri.href}.bin`, mimeType: "application/octet-stream", blob: base64(said) },
    ],
  }));
  server.registerResource(
    "broken",
    new ResourceTemplate("echo://broken/{what}", { list: undefined }),
    { description: `Fails to read; the headers were ${said}` },
    async () => {
      throw new Error(`unreadable; you sent ${said}`);
    },
  );
  server.registerPrompt(
    "echo_prompt",
    {
      description: `A prompt about ${said}`,
      argsSchema: z.object({ topic: completable(z.string().describe(`A topic, such as ${said}`), () => [said, "weather"]) }),
    },
    async ({ topic }) => ({ description: said, messages: [{ role: "user", content: { type: "text", text: `${topic}, knowing ${said}` } }] }),
  );
  server.registerPrompt("echo_broken", { description: "Fails to render." }, async () => {
    throw new Error(`no prompt; you sent ${said}`);
  });
  return server;
}

/** The fixture on loopback, in either era (2026-07-28 only, or 2025 sessions), with the era fixture's counters. */
export function startEchoUpstream(era: UpstreamEra): Promise<ModernUpstream> {
  return startModernUpstream(era, 0, echoServer);
}
