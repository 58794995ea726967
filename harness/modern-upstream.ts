// MCP servers of either protocol era on loopback, built with the v2 server SDK, for tests of the upstream client's
// era negotiation: modern-only (2026-07-28), dual (a sessionful 2025 leg next to the strict modern handler) or
// legacy-only (2025 sessions), switchable while running. Each counts what reaches it by JSON-RPC method and can be
// told to answer `server/discover` with an HTTP status of the test's choosing.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { rpcMethods, toRequest, writeResponse } from "./node-fetch.ts";
import { legacySessions } from "./legacy-sessions.ts";
import {
  McpServer,
  acceptedContent,
  createMcpHandler,
  inputRequired,
  isLegacyRequest,
} from "@modelcontextprotocol/server";
import * as z from "zod";

/** Which eras the server speaks: 2026-07-28 only, both on one URL, or 2025 sessions only. */
export type UpstreamEra = "modern" | "dual" | "legacy";

/** A fault for `server/discover`: this HTTP status with this body instead of the discover result. */
export interface DiscoverFault {
  status: number;
  body?: string;
}

export interface ModernUpstream {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** POSTed JSON-RPC messages by method (`server/discover`, `initialize`, `tools/call`, …), since the last reset. */
  methods: () => Record<string, number>;
  /** HTTP requests by HTTP method (`GET`, `POST`, `DELETE`), since the last reset. */
  http: () => Record<string, number>;
  /** The headers of the last POST of each JSON-RPC method (lowercased names). */
  headers: (method: string) => Record<string, string> | undefined;
  /** 2025 sessions open right now. */
  sessions: () => number;
  /** Changes which eras the server speaks from the next request on (open sessions are kept). */
  setEra: (era: UpstreamEra) => void;
  /** Answers `server/discover` with this fault from now on, or normally again with `undefined`. */
  failDiscover: (fault: DiscoverFault | undefined) => void;
  reset: () => void;
  close: () => Promise<void>;
}

/** The server's name and version, as both eras report it (initialize result, discover result `_meta`). */
export const FIXTURE_INFO = { name: "era-fixture", version: "1.0.0" } as const;

const Confirmation = z.object({ ok: z.boolean() });
/** The same form as JSON Schema, for an elicitation the server sends itself. */
const CONFIRMATION_SCHEMA = { type: "object" as const, properties: { ok: { type: "boolean" as const } }, required: ["ok"] };

/**
 * What the tools of every server instance of one fixture share: calls that wait for each other, and which 2025
 * sessions hold their standalone GET stream right now.
 */
interface Shared {
  /** Resolves once `together` calls of `group` have arrived (or after MAX_SLOW_MS, so nothing waits forever). */
  meet: (group: string, together: number) => Promise<void>;
  /** Resolves true once the session holds its GET stream (false after MAX_SLOW_MS). */
  streamOpen: (sessionId: string | undefined) => Promise<boolean>;
}

/** Polls `check` until it holds, for at most `ms`: what the fixture's waits are bounded by. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** The `Shared` of one fixture, and the sessions whose GET stream is open (the fixture's request handler keeps it). */
function shared(): Shared & { streams: Set<string> } {
  const groups = new Map<string, number>();
  const streams = new Set<string>();
  return {
    streams,
    meet: async (group, together) => {
      groups.set(group, (groups.get(group) ?? 0) + 1);
      await until(() => (groups.get(group) ?? 0) >= together, MAX_SLOW_MS);
    },
    streamOpen: (sessionId) => until(() => sessionId !== undefined && streams.has(sessionId), MAX_SLOW_MS),
  };
}

/** The arguments of the tools that meet: what to ask about, and which calls (`group`, how many) wait for each other. */
const Together = z.object({ action: z.string(), group: z.string(), together: z.number().int().min(1).max(5) });
/** Bounds on what `big` and `slow` do, so no test can make the fixture misbehave for long. */
const MAX_BIG = 1_000_000;
const MAX_SLOW_MS = 5_000;

/**
 * One server instance with the fixture's tools. `echo` answers with its text, `big` with as many bytes as asked,
 * `slow` after as long as asked (the fault tests). `confirm` asks the client to confirm (an elicitation, through
 * `inputRequired`: in the 2026 era as an `input_required` result, on a 2025 session through a real
 * `elicitation/create` request) and then answers with what was decided. `confirm_together` does the same once
 * `together` calls of its `group` are in progress, and answers once all of them have their answer, so that they all
 * ask while all are open. `ask_aside` (2025
 * sessions only) asks the same way, but on the session's standalone GET stream, unrelated to the call, once the
 * stream is open and the group has met; it reports a refusal to relay as `<action>: not asked: <why>`.
 */
function fixtureServer(meeting: Shared): McpServer {
  const server = new McpServer(FIXTURE_INFO, { capabilities: { tools: {}, logging: {} }, instructions: "An era fixture." });
  server.registerTool(
    "echo",
    { description: "Answers with its text.", inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  server.registerTool(
    "big",
    { description: "Answers with this many bytes of text.", inputSchema: z.object({ bytes: z.number().int().min(0).max(MAX_BIG) }) },
    async ({ bytes }) => ({ content: [{ type: "text", text: "x".repeat(bytes) }] }),
  );
  server.registerTool(
    "noisy",
    { description: "Logs one info and one error message while it works, then answers.", inputSchema: z.object({}) },
    async (_args, ctx) => {
      await ctx.mcpReq.log("info", "noisy: an info message");
      await ctx.mcpReq.log("error", "noisy: an error message");
      return { content: [{ type: "text", text: "done" }] };
    },
  );
  server.registerTool(
    "slow",
    { description: "Answers after this many milliseconds.", inputSchema: z.object({ ms: z.number().int().min(0).max(MAX_SLOW_MS) }) },
    async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text", text: `slept ${ms} ms` }] };
    },
  );
  server.registerTool(
    "confirm",
    { description: "Asks the user to confirm an action, then reports the answer.", inputSchema: z.object({ action: z.string() }) },
    async ({ action }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", Confirmation);
      if (answer === undefined) {
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: `Run ${action}?`, requestedSchema: Confirmation }) },
        });
      }
      return { content: [{ type: "text", text: `${action}: ${answer.ok ? "confirmed" : "refused"}` }] };
    },
  );
  server.registerTool(
    "confirm_together",
    { description: "Waits for the other calls of its group, then asks like confirm.", inputSchema: Together },
    async ({ action, group, together }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, "confirm", Confirmation);
      if (answer === undefined) {
        await meeting.meet(group, together);
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ message: `Run ${action}?`, requestedSchema: Confirmation }) },
        });
      }
      await meeting.meet(`${group}/answered`, together);
      return { content: [{ type: "text", text: `${action}: ${answer.ok ? "confirmed" : "refused"}` }] };
    },
  );
  server.registerTool(
    "ask_aside",
    { description: "Asks like confirm, on the session's GET stream (2025 sessions only).", inputSchema: Together },
    async ({ action, group, together }, ctx) => {
      if (!(await meeting.streamOpen(ctx.sessionId))) return { content: [{ type: "text", text: `${action}: not asked: no GET stream` }], isError: true };
      await meeting.meet(group, together);
      const said = await server.server.elicitInput({ message: `Run ${action}?`, requestedSchema: CONFIRMATION_SCHEMA }).then(
        (answer) => (answer.action === "accept" && answer.content?.["ok"] === true ? "confirmed" : "refused"),
        (err: unknown) => `not asked: ${err instanceof Error ? err.message : String(err)}`,
      );
      await meeting.meet(`${group}/answered`, together);
      return { content: [{ type: "text", text: `${action}: ${said}` }] };
    },
  );
  return server;
}

/**
 * The server each request (2026) or session (2025) gets, built from the request that starts it: the era fixture's
 * own tools unless another fixture brings its server (harness/echo-upstream.ts).
 */
export type FixtureServer = (request: Request | undefined) => McpServer;

export async function startModernUpstream(era: UpstreamEra, port = 0, newServer?: FixtureServer): Promise<ModernUpstream> {
  let current = era;
  let discoverFault: DiscoverFault | undefined;
  let methods: Record<string, number> = {};
  let http: Record<string, number> = {};
  const lastHeaders = new Map<string, Record<string, string>>();
  const meeting = shared();
  /** The 2025 leg: one sessionful transport (and server) per session. */
  const serve: FixtureServer = newServer ?? (() => fixtureServer(meeting));
  const sessions = legacySessions(serve);

  const modern = createMcpHandler((context) => serve(context.requestInfo), { legacy: "reject" });

  async function route(request: Request, parsedBody: unknown): Promise<Response> {
    if (current === "legacy") return sessions.handle(request, parsedBody);
    if (current === "modern") return modern.fetch(request, { parsedBody });
    return (await isLegacyRequest(request, parsedBody)) ? sessions.handle(request, parsedBody) : modern.fetch(request, { parsedBody });
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const httpMethod = (req.method ?? "GET").toUpperCase();
    http[httpMethod] = (http[httpMethod] ?? 0) + 1;
    const body = httpMethod === "POST" ? await readAll(req) : undefined;
    let parsedBody: unknown;
    if (body !== undefined) {
      try {
        parsedBody = JSON.parse(body.toString("utf8"));
      } catch {
        parsedBody = undefined;
      }
    }
    const names = rpcMethods(parsedBody);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    for (const name of names) {
      methods[name] = (methods[name] ?? 0) + 1;
      lastHeaders.set(name, headers);
    }
    if (discoverFault && names.includes("server/discover")) {
      res.writeHead(discoverFault.status, { "content-type": "text/plain" }).end(discoverFault.body ?? "");
      return;
    }
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    const request = toRequest(req, body, aborted.signal);
    const response = await route(request, parsedBody);
    // A 2025 session's standalone stream is open from its answer on until the connection closes.
    const session = req.headers["mcp-session-id"];
    if (httpMethod === "GET" && response.ok && typeof session === "string") {
      meeting.streams.add(session);
      res.on("close", () => meeting.streams.delete(session));
    }
    await writeResponse(res, response);
  }

  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    methods: () => ({ ...methods }),
    http: () => ({ ...http }),
    headers: (method) => lastHeaders.get(method),
    sessions: () => sessions.size,
    setEra: (next) => void (current = next),
    failDiscover: (fault) => void (discoverFault = fault),
    reset: () => {
      methods = {};
      http = {};
      lastHeaders.clear();
    },
    close: async () => {
      await modern.close().catch(() => {});
      await sessions.closeAll();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

// ---- node:http ↔ fetch, the few lines the fixture needs ------------------------------------------------------

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
