// `npm run schema`: writes config.schema.json from the zod schema (a unit test fails when the committed copy is stale).
import { writeFileSync } from "node:fs";
import { configJsonSchema } from "../src/config/json-schema.ts";

writeFileSync("config.schema.json", `${JSON.stringify(configJsonSchema(), null, 2)}\n`);
console.log("wrote config.schema.json");
