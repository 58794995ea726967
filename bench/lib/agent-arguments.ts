// The agent-path benchmark's argument building (bench/agent-path.ts): a tool's arguments from the values the user
// gave and the fields the agent read, as a model would map them: a value goes to the field whose name says what the
// user called it (a few everyday synonyms: a comment is a body or a text), else whose description does; a choice
// (enum) is taken from the request's words; values are given the field's type. Pure, tested in
// test/unit/agent-reading.test.ts.
import { words, type Field } from "./agent-reading.ts";

/** Everyday words for what a field may be called (the user's word → field words it also means). */
const SYNONYMS: Record<string, readonly string[]> = {
  comment: ["body", "text", "note", "message", "content"],
  from: ["origin", "start", "starting", "source"],
  to: ["destination", "end"],
  repository: ["repo"],
  branch: ["ref"],
  file: ["path"],
};

/** A crude stem, so "closed" meets "close" and "comments" meets "comment". */
const stem = (w: string): string => (w.length > 4 ? w.replace(/(ing|ed|es|s|e|d)$/, "") : w);

const same = (said: string, field: string): boolean => stem(said) === stem(field) || (SYNONYMS[said] ?? []).includes(field);

/** Field names that name nothing on their own: they take the value of what the request is about. */
const GENERIC = new Set(["name", "id"]);

/** How well a value the user called `key` fits `field`: 3 its name says it all, 2 in part, 1 its description, 0 not. */
function fit(key: string, field: Field): number {
  const said = words(key);
  const name = words(field.name);
  const hits = said.filter((w) => name.some((f) => same(w, f))).length;
  if (hits === said.length) return 3;
  if (hits > 0 && !said.every((w) => GENERIC.has(w))) return 2;
  const sentence = words(field.description.split(/(?<=\.)\s/)[0] ?? "");
  return said.every((w) => sentence.some((f) => same(w, f))) ? 1 : 0;
}

/** A value in the field's type, or undefined when it cannot be one (a choice it does not offer). */
function typed(value: string | number, field: Field): unknown {
  if (field.enum !== undefined) return field.enum.includes(String(value)) ? String(value) : undefined;
  switch (field.type) {
    case "number":
    case "integer":
      return Number.isFinite(Number(value)) ? Number(value) : undefined;
    case "array":
      return [value];
    case "boolean":
    case "object":
      return undefined;
    default:
      return String(value);
  }
}

/** The choice among `options` that the request's words name (with the description's gloss of each), if any. */
function chooseOption(field: Field, ask: readonly string[], mustMatch: boolean): string | undefined {
  const asked = new Set(ask.map(stem));
  const score = (option: string) => {
    const gloss = new RegExp(`\\b${option.replace(/[^\w]/g, "\\$&")} \\(([^)]*)\\)`).exec(field.description)?.[1] ?? "";
    const own = words(option).filter((w) => asked.has(stem(w))).length * 2;
    return own + words(gloss).filter((w) => asked.has(stem(w))).length;
  };
  const options = field.enum ?? [];
  const best = options.map((o) => ({ o, s: score(o) })).reduce<{ o?: string; s: number }>((a, b) => (b.s > a.s ? b : a), { s: 0 });
  if (best.o !== undefined && (!mustMatch || words(best.o).some((w) => asked.has(stem(w))))) return best.o;
  return mustMatch ? undefined : options[0];
}

/**
 * Arguments for a call: each given value to the field it fits best (required fields first, a value used once), then
 * choices the request's words name, then a required `name`/`id` left empty gets the value of what the request is
 * about (the given value whose words it uses). Required fields nothing fits stay out: the answer will say so.
 */
export function buildArguments(fields: readonly Field[], given: Readonly<Record<string, string | number>>, ask: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const used = new Set<string>();
  const pairs = Object.entries(given)
    .flatMap(([key, value]) => fields.map((field, order) => ({ key, value, field, order, score: fit(key, field) })))
    // A description alone is weak evidence: it places a value only in a field the tool requires.
    .filter((p) => (p.score > 1 || (p.score === 1 && p.field.required)) && typed(p.value, p.field) !== undefined)
    .sort((a, b) => b.score - a.score || Number(b.field.required) - Number(a.field.required) || a.order - b.order);
  for (const p of pairs) {
    if (used.has(p.key) || p.field.name in args) continue;
    args[p.field.name] = typed(p.value, p.field);
    used.add(p.key);
  }
  const asked = words(ask);
  // An optional choice must be named by the request itself, not by the word for a value the user gave ("issue 9" is
  // no issue type).
  const valueWords = new Set(Object.keys(given).flatMap(words).map(stem));
  const unlike = asked.filter((w) => !valueWords.has(stem(w)));
  for (const field of fields) {
    if (field.name in args || field.enum === undefined) continue;
    const choice = field.required ? chooseOption(field, asked, false) : chooseOption(field, unlike, true);
    if (choice !== undefined) args[field.name] = choice;
  }
  const subject = Object.entries(given).find(([key]) => words(key).every((w) => asked.some((a) => stem(a) === stem(w))));
  for (const field of fields) {
    if (field.name in args || !field.required || !GENERIC.has(field.name.toLowerCase()) || subject === undefined) continue;
    const value = typed(subject[1], field);
    if (value !== undefined) args[field.name] = value;
  }
  return args;
}
