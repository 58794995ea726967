// The code view's tool inputs: one zod schema each; the JSON Schema hosts see is generated from it.
import * as z from "zod";
import { SEARCH_LIMIT_MAX } from "../../catalog/search.ts";
import { QUERY_DESCRIPTION } from "../schemas.ts";

/** A program longer than this is refused before any sandbox is loaded (a real one is a few dozen lines). */
export const MAX_PROGRAM_CHARS = 100_000;

export const CodeSearchInput = z.object({
  query: z.string().min(1).max(1000).describe(QUERY_DESCRIPTION),
  server: z.string().max(200).optional(),
  limit: z.number().int().min(1).max(SEARCH_LIMIT_MAX).optional(),
});

export const CodeDescribeInput = z.object({
  path: z.string().min(1).max(400),
  full: z.boolean().optional(),
});

export const CodeExecuteInput = z.object({
  code: z.string().min(1).max(MAX_PROGRAM_CHARS),
  approve: z.string().min(1).max(100).optional(),
});
