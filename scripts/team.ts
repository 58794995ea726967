// `npm run team -- <command>`: the operator's tool for team configs and tokens (local KV by default, --remote for the deployed one).
import { readFileSync } from "node:fs";
import { mintToken } from "../src/auth/token.ts";
import { kvKeys, type TokenRecord } from "../src/config/keys.ts";
import { credentialWarnings, redactConfig } from "../src/config/redact.ts";
import { TeamName } from "../src/config/schema.ts";
import { parseConfigText } from "../src/config/validate.ts";
import { KvError, kvGet, kvPut, type KvTarget } from "./lib/kv.ts";

const USAGE = `usage: npm run team -- <command> [--remote] [--persist-to DIR]
  put <team> <config.json>     validate the file and store it as the team's config
  get <team>                   print the team's config (literal header values masked)
  token <team> [--label TEXT]  mint a new token for the team; the token is the last line printed
  check <config.json>          validate a config file without storing it`;

interface Options extends KvTarget {
  label?: string;
  positional: string[];
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { remote: false, positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--remote") opts.remote = true;
    else if (arg === "--local") opts.remote = false;
    else if (arg === "--persist-to") opts.persistTo = argv[++i];
    else if (arg === "--label") opts.label = argv[++i];
    else if (arg.startsWith("--")) fail(`unknown option ${arg}\n${USAGE}`);
    else opts.positional.push(arg);
  }
  return opts;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/** Runs a KV operation; a wrangler failure ends the command with its message. */
function kv<T>(op: () => T): T {
  try {
    return op();
  } catch (err) {
    if (err instanceof KvError) fail(err.message);
    throw err;
  }
}

function team(name: string | undefined): string {
  if (!name) fail(USAGE);
  const parsed = TeamName.safeParse(name);
  if (!parsed.success) fail(`bad team name ${JSON.stringify(name)}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** Validates a file; prints errors and exits non-zero on a bad one, prints warnings either way. */
function validateFile(path: string | undefined): string {
  if (!path) fail(USAGE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    fail(`cannot read ${path}: ${(err as Error).message}`);
  }
  const result = parseConfigText(text);
  if (!result.ok) fail(`${path} is not a valid config:\n${result.errors.map((e) => `  - ${e}`).join("\n")}`);
  for (const warning of credentialWarnings(JSON.parse(text))) process.stderr.write(`warning: ${warning}\n`);
  const { mode, upstreams } = result.config;
  const lazy = upstreams.filter((u) => u.description !== undefined).length;
  process.stdout.write(
    `${path}: valid (${mode === "single" ? "single-MCP mode" : "config-file mode"}, ${upstreams.length} enabled upstream(s), ${lazy} lazy)\n`,
  );
  return text;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const [command, ...rest] = opts.positional;
  switch (command) {
    case "check":
      validateFile(rest[0]);
      return;
    case "put": {
      const name = team(rest[0]);
      const text = validateFile(rest[1]);
      kv(() => kvPut(opts, kvKeys.config(name), JSON.stringify(JSON.parse(text))));
      process.stdout.write(`stored the config of team ${name} (${opts.remote ? "remote" : "local"})\n`);
      return;
    }
    case "get": {
      const name = team(rest[0]);
      const text = kv(() => kvGet(opts, kvKeys.config(name)));
      if (text === undefined) fail(`team ${name} has no config`);
      process.stdout.write(`${JSON.stringify(redactConfig(JSON.parse(text)), null, 2)}\n`);
      return;
    }
    case "token": {
      const name = team(rest[0]);
      const minted = await mintToken();
      const record: TokenRecord = { hash: minted.hash, createdAt: new Date().toISOString() };
      if (opts.label) record.label = opts.label;
      kv(() => kvPut(opts, kvKeys.token(name, minted.id), JSON.stringify(record)));
      process.stdout.write(`minted token ${minted.id} for team ${name}; it is shown once, store it now:\n${minted.token}\n`);
      return;
    }
    default:
      fail(USAGE);
  }
}

await main();
