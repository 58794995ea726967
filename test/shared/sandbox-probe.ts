// The program both code-view suites run to look for a way out of the sandbox: every global it can name, whether
// `env` and `process` exist, a fetch of an upstream's URL, the cache, what the namespace object holds, and one
// tool call through it. It returns all of that (and logs its start) for the test to search for the team's secret.

/** The probe as an `execute` program against namespace `ns`, fetching `url`. */
export function sandboxProbe(ns: string, url: string): string {
  return [
    "async () => {",
    "  const seen = {};",
    "  seen.globals = Object.getOwnPropertyNames(globalThis);",
    "  seen.env = typeof env; seen.process = typeof process;",
    `  try { seen.fetch = (await fetch(${JSON.stringify(url)})).status; } catch (e) { seen.fetch = String(e); }`,
    "  try { const c = await caches.open('x'); seen.cache = String(await c.match('http://x/')); } catch (e) { seen.cache = String(e); }",
    `  seen.namespace = Object.getOwnPropertyNames(${ns}); seen.namespaceProto = Object.getOwnPropertyNames(Object.getPrototypeOf(${ns}) ?? {});`,
    `  seen.graph = await ${ns}.read_graph();`,
    "  console.log(JSON.stringify(seen).slice(0, 150));",
    "  return seen;",
    "}",
  ].join("\n");
}
