// Bench-only Worker + Durable Object (bench/floor/wrangler.toml): what `wrangler dev` costs before the proxy does
// any work of its own, and the price of each piece of the proxy's request path, measured one piece at a time.
// Local types only, so this file type-checks with the Node project (tsconfig.node.json) without workers-types.
//
//   /worker          the Worker answers at once
//   /do              the Worker forwards the request to one Durable Object, which answers at once
//   /new-do          the Worker forwards the request to a new Durable Object (a fresh name each time), which writes
//                    one storage key (as a new session writes its record) and answers: what every session start pays
//   /kv-do           the Worker reads a KV key (as the router reads a token), then forwards to the object
//   /do-storage      the object reads one storage key (as the session object reads its record), then answers
//   /do-fetch        the object POSTs the body to NODE_URL (a plain Node server) and answers with its answer
//   /crypto-do       the Worker hashes and HMACs (as the router checks a token and a session id), then forwards
//   /readbody-do     the Worker reads the body with the proxy's own reader (src/lib/request-body.ts: a counted
//                    reader loop) instead of request.text(), then forwards
//   /ratelimit-do    the Worker asks a rate-limit binding about the request (as the router asks TOKEN_LIMITER),
//                    then forwards: under wrangler dev that binding is workerd's local stand-in
//   /log-do          the object answers, then writes one console line the size of the proxy's per-call line (as the
//                    proxy writes it: on the next turn of the event loop, after the answer)

import { DEFAULT_BODY_LIMIT, readLimitedText } from "../../src/lib/request-body.ts";

interface Stub {
  fetch(request: Request): Promise<Response>;
}
interface Env {
  FLOOR: { getByName(name: string): Stub };
  KV: { get(key: string): Promise<string | null> };
  LIMITER: { limit(options: { key: string }): Promise<{ success: boolean }> };
  NODE_URL?: string;
}
interface State {
  storage: { get(key: string): Promise<unknown>; put(key: string, value: unknown): Promise<void> };
}

const OK = '{"ok":true}';
const answer = (body = OK) => new Response(body, { headers: { "content-type": "application/json" } });

/** A line shaped like the proxy's per-call `tool_call` line (src/lib/log.ts). */
const LOG_LINE = () =>
  JSON.stringify({ at: new Date().toISOString(), event: "tool_call", team: "bench", session: "0123456789ab", principal: "t:0123456789abcdef", upstream: "echo", tool: "echo", ms: 1, outcome: "ok" });

let hmacKey: Promise<CryptoKey> | undefined;

/** As the router does: read the body, then hand the object a new request carrying it. */
async function toObject(env: Env, request: Request, body: string): Promise<Response> {
  const forwarded = new Request(request.url, { method: request.method, headers: request.headers, body });
  return env.FLOOR.getByName("floor").fetch(forwarded);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/readbody-do") {
      return toObject(env, request, (await readLimitedText(request, DEFAULT_BODY_LIMIT)) ?? "");
    }
    // Every variant reads the body, as the proxy does (an unread body costs the runtime extra work).
    const body = await request.text();
    switch (pathname) {
      case "/worker":
        return answer();
      case "/do":
      case "/do-storage":
      case "/do-fetch":
        return toObject(env, request, body);
      case "/new-do":
        return env.FLOOR.getByName(`new-${crypto.randomUUID()}`).fetch(new Request(request.url, { method: request.method, headers: request.headers, body }));
      case "/ratelimit-do":
        if (!(await env.LIMITER.limit({ key: "floor/token" })).success) return new Response("limited", { status: 429 });
        return toObject(env, request, body);
      case "/log-do":
        return toObject(env, request, body);
      case "/kv-do":
        await env.KV.get("token:floor");
        return toObject(env, request, body);
      case "/crypto-do": {
        const bytes = new TextEncoder().encode(body);
        hmacKey ??= crypto.subtle.importKey("raw", new TextEncoder().encode("bench"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
        await Promise.all([crypto.subtle.digest("SHA-256", bytes), crypto.subtle.sign("HMAC", await hmacKey, bytes)]);
        return toObject(env, request, body);
      }
      default:
        return new Response("not found", { status: 404 });
    }
  },
};

export class FloorObject {
  readonly #state: State;
  readonly #env: Env;
  constructor(state: State, env: Env) {
    this.#state = state;
    this.#env = env;
  }

  async fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const body = await request.text();
    if (pathname === "/new-do") {
      await this.#state.storage.put("session", body);
      return answer();
    }
    if (pathname === "/do-storage") {
      await this.#state.storage.get("session");
      return answer();
    }
    if (pathname === "/log-do") {
      setTimeout(() => console.log(LOG_LINE()), 0);
      return answer();
    }
    if (pathname === "/do-fetch" && this.#env.NODE_URL) {
      const upstream = await fetch(this.#env.NODE_URL, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      return answer(await upstream.text());
    }
    return answer();
  }
}
