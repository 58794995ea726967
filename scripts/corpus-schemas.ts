// `npm run schemas:corpus`: how many of the recorded corpus tools' inputSchemas are no valid JSON Schema, judged two
// ways: by the proxy's own check (src/catalog/schema-soundness.ts: a tool it fails has its arguments unchecked), and
// by ajv against the meta-schema of the draft the schema names (and compiled by it) (2020-12 when it names none, as MCP says; draft-07 for
// draft-06/07). The figure is in docs/architecture.md ("Arguments checked before they leave").
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Ajv as AjvDraft7 } from "ajv";
import { schemaDialect, schemaFaults } from "../src/catalog/schema-soundness.ts";
import { CORPUS_DIR } from "../harness/replay-server.ts";

const options = { strict: false, validateFormats: false } as const;
const metaCheckers = { "2020-12": new Ajv2020(options), "7": new AjvDraft7(options) };

let tools = 0;
const dialects = new Map<string, number>();
const ours: string[] = [];
const ajvs: string[] = [];
for (const file of readdirSync(CORPUS_DIR).filter((f) => f.endsWith(".json")).sort()) {
  const server = JSON.parse(readFileSync(join(CORPUS_DIR, file), "utf8")) as { tools: Array<{ name: string; inputSchema: Record<string, unknown> }> };
  for (const tool of server.tools) {
    tools += 1;
    const dialect = schemaDialect(tool.inputSchema) ?? "unknown";
    dialects.set(dialect, (dialects.get(dialect) ?? 0) + 1);
    const faults = schemaFaults(tool.inputSchema);
    if (faults.length > 0) ours.push(`${file} ${tool.name}: ${faults.join("; ")}`);
    const ajv = dialect === "7" ? metaCheckers["7"] : dialect === "2020-12" ? metaCheckers["2020-12"] : undefined;
    const { $schema: _named, ...schema } = tool.inputSchema;
    if (ajv === undefined) ajvs.push(`${file} ${tool.name}: dialect ${dialect} not measured`);
    else if (ajv.validateSchema(schema) !== true) ajvs.push(`${file} ${tool.name}: ${ajv.errorsText(ajv.errors)}`);
    else {
      // A `pattern` is only a format in the meta-schema: compiling is where ajv judges it.
      try {
        ajv.compile(schema);
      } catch (err) {
        ajvs.push(`${file} ${tool.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}
console.log(`${tools} tools; dialects: ${[...dialects].map(([d, n]) => `${d} ${n}`).join(", ")}`);
console.log(`not valid JSON Schema by the proxy's check (arguments unchecked): ${ours.length}`);
for (const line of ours) console.log(`  ${line}`);
console.log(`not valid against their draft's meta-schema (ajv): ${ajvs.length}`);
for (const line of ajvs) console.log(`  ${line}`);
