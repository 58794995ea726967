// What a person is asked when a call needs their consent (a policy's `approve`, or the config's top-level `approve`
// and `approve_destructive`), in every view and era: the tool named, the arguments shown so padding hides nothing,
// and a yes only when they say yes. The meta and direct views ask inside the call (src/views/call-consent.ts); the
// code view asks for a program's calls (src/views/code/consent.ts). Pure.
import type { ElicitRequestFormParams } from "@modelcontextprotocol/server";

/** How long a person has to answer (the request's own timeout would be the SDK's 60 s). */
export const APPROVAL_WAIT_MS = 10 * 60 * 1000;

/** Characters of one string value, and items of one array, shown in a consent question before they are shortened. */
const SHOWN_STRING = 120;
const SHOWN_ITEMS = 20;

/** Every key kept, long strings and arrays shortened (each saying how much was left out), so padding hides nothing. */
function shortened(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.length > SHOWN_STRING ? `${value.slice(0, SHOWN_STRING)}… (${value.length} characters)` : value;
  if (typeof value !== "object" || value === null) return value;
  if (depth > 8) return "…";
  if (Array.isArray(value)) {
    const shown = value.slice(0, SHOWN_ITEMS).map((v) => shortened(v, depth + 1));
    return value.length > SHOWN_ITEMS ? [...shown, `… and ${value.length - SHOWN_ITEMS} more items`] : shown;
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortened(v, depth + 1)]));
}

/**
 * A call's arguments as a person is asked to allow them: whole while they fit `max` characters; else every key with
 * long values shortened; and if even that does not fit, cut, saying so (then the user cannot see all of it, and
 * should not allow it blind).
 */
export function consentPreview(argsJson: string, max = 1500): string {
  if (argsJson.length <= max) return argsJson;
  let short: string;
  try {
    short = JSON.stringify(shortened(JSON.parse(argsJson), 0));
  } catch {
    short = argsJson;
  }
  const note = ` (long values shortened; ${argsJson.length} characters in all)`;
  if (short.length <= max) return short + note;
  return `${short.slice(0, max - 1)}… (too long to show whole: ${argsJson.length} characters; only the start is shown)`;
}

/** Who wants the call made, as the question names them: the agent (a tool call of its own) or a program it runs. */
export type Asker = "The agent" | "A program";

/** The form-mode elicitation that asks the user about one call of `tool` with `argsJson`. */
export function consentQuestion(tool: string, argsJson: string, asker: Asker = "A program"): ElicitRequestFormParams & { mode: "form" } {
  return {
    mode: "form",
    message: `${asker} wants to call ${tool} with ${consentPreview(argsJson)}. Allow this call?`,
    requestedSchema: {
      type: "object",
      properties: { allow: { type: "boolean", title: `Allow ${tool}`, description: "Allow this one call." } },
      required: ["allow"],
    },
  };
}

/** Whether the user's answer to `consentQuestion` allows the call: only an explicit yes does. */
export const allows = (answer: { action?: unknown; content?: unknown } | undefined): boolean =>
  answer?.action === "accept" && (answer.content as { allow?: unknown } | undefined)?.allow === true;

/** The words of a call the user did not allow. */
export const notAllowed = (tool: string): string => `The user did not allow ${tool}; it was not called.`;

/**
 * The words of a call that needs consent where nobody can be asked: what waits, which rule asks, and how a team lets
 * it run (a host that can ask, or the tool taken out of the rule).
 */
export function cannotAsk(tool: string, rule: string): string {
  return (
    `${tool} was not called: each call of it needs the user's consent (the team's ${rule} rule), and this host cannot be asked ` +
    "(it did not declare form elicitation). Use a host that supports elicitation, or ask a team admin to take the tool out of that rule."
  );
}
