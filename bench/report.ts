// Stitches every bench/results/<name>.md section into BENCHMARKS.md (tokens, latency, load, scale, then any
// others), and holds the one chart helper the benchmarks share (vega-lite → vega, rendered headless to SVG).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as vega from "vega";
import { compile, type TopLevelSpec } from "vega-lite";
import { RESULTS_DIR } from "./lib/results.ts";

export const ROOT = join(import.meta.dirname, "..");
export const CHARTS_DIR = join(import.meta.dirname, "charts");
const ORDER = ["tokens", "latency", "load", "scale", "budget", "bundle", "tokenizer", "audit-load", "audit-dev"];

/** A vega-lite spec rendered to SVG text without a browser, canvas or native addon (`renderer: "none"`). */
export async function svgChart(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Renders `spec` and writes bench/charts/<name>.svg (not in smoke runs); returns the SVG text either way. */
export async function writeChart(name: string, spec: TopLevelSpec, smoke: boolean): Promise<string> {
  const svg = await svgChart(spec);
  if (!svg.startsWith("<svg")) throw new Error(`chart ${name} did not render to SVG`);
  if (!smoke) {
    mkdirSync(CHARTS_DIR, { recursive: true });
    writeFileSync(join(CHARTS_DIR, `${name}.svg`), `${svg}\n`);
  }
  return svg;
}

/** True when `metaUrl` is the module Node was asked to run (so a bench can also be imported for its helpers). */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(metaUrl);
}

const INTRO = `# Benchmarks

What dynmcp-edge costs a host in context tokens, in latency and under load, and how its catalog grows. Every
figure below was produced on the machine named under its section by \`npm run bench\` (one script per section:
\`npm run bench:tokens\`, \`bench:latency\`, \`bench:load\`, \`bench:scale\`), which writes
\`bench/results/<name>.json\` and \`.md\` and then stitches this file with \`node bench/report.ts\`. Times are
medians or percentiles of repeated runs, and every ratio compares figures measured in the same run; timings
on a shared 2-core machine are noisy, ratios less so. Tokens are counted with \`js-tiktoken\` (o200k_base), the
way \`../shared/corpus/README.md\` counts them.
`;

/** The sections in their fixed order: tokens, latency, load, scale, then any others by name. */
export function sectionFiles(dir = RESULTS_DIR): string[] {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .map((f) => f.slice(0, -3));
  const rank = (n: string) => (ORDER.includes(n) ? ORDER.indexOf(n) : ORDER.length);
  return names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).map((n) => join(dir, `${n}.md`));
}

export function buildReport(dir = RESULTS_DIR): string {
  const sections = sectionFiles(dir).map((f) => readFileSync(f, "utf8").trim());
  const missing = ORDER.filter((n) => !existsSync(join(dir, `${n}.md`)));
  const note = missing.length
    ? `\n_Not measured yet: ${missing.map((n) => `\`bench:${n}\``).join(", ")}._\n`
    : "";
  return `${INTRO}${note}\n${sections.join("\n\n")}\n`;
}

if (isMain(import.meta.url)) {
  const out = join(ROOT, "BENCHMARKS.md");
  mkdirSync(dirname(out), { recursive: true });
  const text = buildReport();
  writeFileSync(out, text);
  process.stdout.write(`wrote ${out} (${sectionFiles().length} section(s))\n`);
}
