// `npm run bench:bundle`: the Worker's size as `npm run deploy` builds it (`wrangler deploy --dry-run --env
// production`), against the build before the one-SDK restructure, with the packages that take the space.
import { BUDGET, measureBundle, type BundleFigures } from "../scripts/check-bundle.ts";
import { table } from "./lib/markdown.ts";
import { isSmoke, writeResult } from "./lib/results.ts";
import { isMain } from "./report.ts";

/**
 * The build before the restructure (issue 13), measured the same way on 2026-11-24 with wrangler 4.156.2 (the
 * method is in docs/sdk-choice.md): agents, the v1 SDK and both v2 packages in one bundle.
 */
export const BEFORE: BundleFigures = {
  kib: 3609.91,
  gzipKib: 698.25,
  packages: [
    { name: "zod", kib: 765.2 },
    { name: "agents", kib: 673.8 },
    { name: "@modelcontextprotocol/client", kib: 444.3 },
    { name: "@modelcontextprotocol/server", kib: 333.6 },
    { name: "ajv (with ajv-formats, fast-uri)", kib: 290.5 },
    { name: "@modelcontextprotocol/sdk", kib: 246.0 },
    { name: "mime-db", kib: 207.6 },
    { name: "src/", kib: 155.4 },
  ],
};

/**
 * The gzip budget's ledger: what each change took of the headroom (or gave back), measured with
 * scripts/check-bundle.ts before and after it, and why (the budget is shared by every change ahead).
 */
export const LEDGER: ReadonlyArray<{ change: string; beforeGzipKib: number; afterGzipKib: number; why: string }> = [
  {
    change: "fresh-clone fixes, endless programs, questions to the right call, reloads, the 2026 catalog",
    beforeGzipKib: 312.82,
    afterGzipKib: 319.13,
    why:
      "the session's side of code mode's checkpoints 1.9 KiB (acorn itself, about 33 KiB, runs from a static asset and is refused in the bundle); " +
      "the rest: relayed requests' origins and input rounds, served runtimes and their retirement, the 2026 list with its catalog freshness",
  },
  {
    change: "security findings: secrets withheld from upstream echoes, limited bodies, per-address limits, per-principal caps, single-use refresh tokens and connect links",
    beforeGzipKib: 319.13,
    afterGzipKib: 326.42,
    why:
      "withholding every form of a secret in every upstream message ~0.9 KiB; the OAuth token endpoint's single use, scope and client-name rules ~1.6; " +
      "per-address limits and signed flow states ~1.4; per-principal sessions and listen streams ~1.5; one body reader, registration bounds and the consent handle; guarded library fetches ~0.9",
  },
  {
    change: "structure: era-neutral views and one call function, thin objects, the request-path layout, one signed-handle format, one bounded cache, answers as JSON when nothing streams",
    beforeGzipKib: 326.42,
    afterGzipKib: 330.71,
    why:
      "not measured part by part; what was added: the reader of every signed value's old form (auth/legacy-handles.ts, to go 30 days after deploy) beside the versioned format with zod payloads, " +
      "the view interface with its input ports and scopes, the answer modes and the era step's shortcut, and the split files' own module headers",
  },
  {
    change: "latency: wrangler's keep_names off, the era step's shape check, long texts' token counts remembered",
    beforeGzipKib: 330.71,
    afterGzipKib: 308.81,
    why:
      "headroom given back: esbuild's keep_names wrapped every function and class of the bundle in a call that sets its name (about 22 KiB gzip of those calls); " +
      "nothing in the proxy reads a function's name, and error classes set their own",
  },
  {
    change: "per-member tool policies with approvals and an audit trail; the dashboard served by the Worker",
    beforeGzipKib: 308.81,
    afterGzipKib: 345.47,
    why: "not measured part by part: the policy decisions, the consent questions, the audit outbox and queries, and the dashboard's pages (server-rendered JSX, no script)",
  },
  {
    change: "answers sized for a model: a server's index, arguments checked before they leave; the SDK's own validator copies replaced",
    beforeGzipKib: 345.47,
    afterGzipKib: 344.02,
    why:
      "the argument check took 9.5 KiB (a third copy of @cfworker/json-schema beside the two the SDK's server and client seal into their workerd shims) and the index about 1.4; " +
      "wrangler.toml's [alias] puts one validator on the project's copy in place of the SDK's shims, which gave back 12.4",
  },
  {
    change: "search at 20,000 tools: the compact shared index stored with the catalog, the semantic stage, the workers-ai embedder and its vector cache, the nothing-useful answer; the admin API's OpenAPI document moved to the assets",
    beforeGzipKib: 344.02,
    afterGzipKib: 348.65,
    why:
      "the search's parts took 11.3 KiB (355.32 with them, over the budget: about 28 KiB of minified code over 40 files, none large); " +
      "the admin API's OpenAPI document is now made at set-up from the same zod schemas (scripts/build-openapi.ts) and served from the assets, which took zod-openapi and the generator (24 KiB minified) out and gave back 6.67",
  },
];

const pct = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)}%`;

export function bundleSection(after: BundleFigures, before: BundleFigures = BEFORE, unminified?: BundleFigures): string {
  const verdict = after.kib <= BUDGET.kib && after.gzipKib <= BUDGET.gzipKib ? "**met**" : "**missed**";
  const sizes = table(
    ["build (`wrangler deploy --dry-run --env production`)", "KiB", "gzip KiB", "of before (size / gzip)"],
    [
      ["before: agents + v1 SDK + v2 server and client", before.kib, before.gzipKib, "100% / 100%"],
      ...(unminified
        ? [["now, unminified (as the builds above were)", unminified.kib, unminified.gzipKib, `${pct(unminified.kib, before.kib)} / ${pct(unminified.gzipKib, before.gzipKib)}`]]
        : []),
      ["now, as deployed: minified (with source maps uploaded beside it)", after.kib, after.gzipKib, `${pct(after.kib, before.kib)} / ${pct(after.gzipKib, before.gzipKib)}`],
    ],
    ["---", "--:", "--:", "--:"],
  );
  const now = new Map(after.packages.map((p) => [p.name, p.kib]));
  const names = [...new Set([...after.packages.slice(0, 10).map((p) => p.name), ...before.packages.map((p) => p.name)])];
  const packages = table(
    ["package", "KiB before", "KiB now"],
    names.map((name) => [name, before.packages.find((p) => p.name === name)?.kib ?? "(not among the largest)", now.get(name) ?? "gone"]),
    ["---", "--:", "--:"],
  );
  const ledger = table(
    ["change", "gzip KiB before", "after", "took", "why"],
    LEDGER.map((l) => {
      const grew = l.afterGzipKib - l.beforeGzipKib;
      return [l.change, l.beforeGzipKib, l.afterGzipKib, `${grew >= 0 ? "+" : ""}${grew.toFixed(2)}`, l.why];
    }),
    ["---", "--:", "--:", "--:", "---"],
  );
  return `## Bundle size

What \`npm run deploy\` would upload: wrangler's "Total Upload" of \`wrangler deploy --dry-run --env production\` and its gzip, with the KiB each package puts in the output (esbuild's metafile). The goal is at most half of the build before the restructure: ≤ ${BUDGET.kib} KiB and gzip ≤ ${BUDGET.gzipKib} KiB → ${verdict} for the deployed build. \`scripts/check-bundle.ts\`, part of \`npm test\`, fails a build over that budget or holding any code of \`@modelcontextprotocol/sdk\`, \`agents\`, \`ajv\` or \`acorn\` (the code sandbox's parser, which runs from a static asset). Until issue 15 the production build was unminified; the 2026-07-28 era (the SDK's per-request handler, its listen router, the client's era negotiation) took the unminified build over the gzip budget, and the OAuth library of issue 16 (\`@cloudflare/workers-oauth-provider\`) over the size budget too, so production builds are now minified, with source maps uploaded so stack traces keep our names. The unminified figure of the same tree is shown for comparison with the older rows${unminified && (unminified.gzipKib > BUDGET.gzipKib || unminified.kib > BUDGET.kib) ? " (it alone would miss the budget)" : ""}; the package table is the deployed build's.

${sizes}

${packages}

What each change took of the gzip headroom (${BUDGET.gzipKib} KiB in all; ${(BUDGET.gzipKib - after.gzipKib).toFixed(2)} KiB left now):

${ledger}

Where the rest went: \`agents\` (with \`mime-db\`, \`capnweb\` and its other dependencies) left with the one class the proxy used from it, replaced by \`src/session/transport.ts\`; the v1 SDK left for the v2 packages the 2026-07-28 work builds on; \`ajv\` left because v2 picks \`@cfworker/json-schema\` for workerd through its export conditions; zod fell to about a third once it is imported as a namespace (\`import * as z\`), which lets esbuild drop its locales. The two v2 packages each carry their own copy of the SDK's core (about 250 KiB between them): that is upstream's design (docs/sdk-choice.md).`;
}

if (isMain(import.meta.url)) {
  const after = measureBundle();
  const unminified = measureBundle({ minify: false });
  const markdown = bundleSection(after, BEFORE, unminified);
  console.log(markdown);
  console.log(`FIGURES ${JSON.stringify({ kib: after.kib, gzipKib: after.gzipKib, unminified: { kib: unminified.kib, gzipKib: unminified.gzipKib } })}`);
  writeResult("bundle", { before: BEFORE, after, unminified }, markdown, isSmoke());
}
