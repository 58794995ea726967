// The published JSON Schema of the team config, generated from the zod schema (committed as config.schema.json).
import * as z from "zod";
import { TeamConfig } from "./schema.ts";

export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(TeamConfig, { io: "input", target: "draft-2020-12" }),
    title: "dynmcp-edge team config",
  };
}
