// Tool pinning: a tool's definition is recorded the first time the team sees it; a changed definition is
// withheld until an admin approves it (rug-pull defence). Pins live in KV, per team, with their state as metadata.
import * as z from "zod";
import type { Tool } from "@modelcontextprotocol/server";
import { sha256Hex } from "../lib/bytes.ts";
import { kvKeys, logUnreadable, type PinRecord } from "../config/keys.ts";
import { log } from "../lib/log.ts";
import type { KvLike, Same } from "./kv.ts";

/** A pin's metadata (`PinRecord`). */
const PinMetadata = z.object({ hash: z.string(), pending: z.string().optional(), pendingSince: z.string().optional() });
const pinMatches: Same<z.output<typeof PinMetadata>, PinRecord> = true;
void pinMatches;

/**
 * A pin as listed. Missing or unreadable metadata is not read as "no pin" (that would pin whatever the upstream
 * offers now): it is a pin of no known hash, so the tool is withheld until an admin approves it (fail closed).
 */
function readPin(key: string, metadata: unknown): PinRecord {
  if (metadata === undefined || metadata === null) return { hash: "" };
  const parsed = PinMetadata.safeParse(metadata);
  if (parsed.success) return parsed.data;
  logUnreadable("pin", key);
  return { hash: "" };
}

/** JSON with object keys sorted, so equal definitions hash equal whatever order the upstream wrote them in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The hash of what a tool promises: name, description, input schema, annotations. */
export async function toolHash(tool: Tool): Promise<string> {
  const text = canonicalJson({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations });
  return sha256Hex(text);
}

export interface PinOutcome {
  allowed: Tool[];
  withheld: string[];
}

/** Splits a catalog's tools into those that match their pins (new ones are pinned now) and those withheld. */
export async function checkPins(kv: KvLike, team: string, server: string, tools: Tool[]): Promise<PinOutcome> {
  const prefix = kvKeys.pinPrefix(team, server);
  const pins = new Map<string, PinRecord>();
  for (const entry of await kv.list(prefix)) {
    pins.set(decodeURIComponent(entry.name.slice(prefix.length)), readPin(entry.name, entry.metadata));
  }
  const outcome: PinOutcome = { allowed: [], withheld: [] };
  // Hashes and KV writes run side by side: a server seen for the first time pins all its tools on the connect path.
  const hashes = await Promise.all(tools.map(toolHash));
  const writes: Array<Promise<void>> = [];
  const write = (name: string, record: PinRecord) => writes.push(kv.put(kvKeys.pin(team, server, name), JSON.stringify(record), record));
  tools.forEach((tool, i) => {
    const hash = hashes[i]!;
    const pin = pins.get(tool.name);
    if (!pin) {
      write(tool.name, { hash });
      outcome.allowed.push(tool);
    } else if (pin.hash === hash) {
      outcome.allowed.push(tool);
    } else {
      outcome.withheld.push(tool.name);
      if (pin.pending !== hash) {
        write(tool.name, { hash: pin.hash, pending: hash, pendingSince: new Date().toISOString() });
        log({ event: "pin_withheld", team, upstream: server, tool: tool.name });
      }
    }
  });
  await Promise.all(writes);
  return outcome;
}
