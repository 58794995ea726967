// A newcomer's first run (issue 12): the install says only what matters, the team command helps and judges URLs as
// `put` would, and examples/session.ts runs one whole session (load_mcp, then the loaded server's tool) through
// `wrangler dev`, which separate MCP Inspector CLI calls cannot do.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { provisionTeam, teamCliAsync } from "../../harness/clients.ts";
import { ROOT } from "./bench-run.ts";
import { inspector, text } from "./helpers.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program asynchronously (the event loop stays free), killed after `timeoutMs`. */
function run(command: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-first-run-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------------
// scripts/setup.mjs, with a stand-in `npm` that prints what npm 11 prints on Node 20

/**
 * The machine's own Node when there is one besides the project's (setup.mjs runs on it before anything is
 * installed: `node` is then whatever the machine has), else this one.
 */
function machineNode(): string {
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(folder, "node");
    if (folder && !folder.startsWith(join(ROOT, "node_modules")) && existsSync(candidate)) return candidate;
  }
  return process.execPath;
}

const ENGINE_WARNING = (pkg: string, wants: string) => [
  "npm warn EBADENGINE Unsupported engine {",
  `npm warn EBADENGINE   package: '${pkg}',`,
  `npm warn EBADENGINE   required: { node: '${wants}' },`,
  "npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }",
  "npm warn EBADENGINE }",
];

/** What the stand-in npm prints (on stderr) and does, by FAKE_NPM. */
const FAKE_NPM = `#!/bin/sh
echo "$@" >> npm-calls.txt
if [ "$FAKE_NPM" = "ok" ]; then
  cat >&2 <<'EOF'
${[
  "npm warn Unknown user config \"nodedir\". This will stop working in the next major version of npm.",
  ...ENGINE_WARNING("dynmcp-edge@0.1.0", ">=22.12"),
  ...ENGINE_WARNING("@babel/code-frame@8.0.6", "^22.18.0 || >=24.11.0"),
  ...ENGINE_WARNING("vitest@5.1.1", "^22.12.0 || >=24.0.0"),
].join("\n")}
EOF
  mkdir -p node_modules/.bin && : > node_modules/.bin/node
  echo "added 3 packages in 1s"
  exit 0
fi
cat >&2 <<'EOF'
${[
  ...ENGINE_WARNING("dynmcp-edge@0.1.0", ">=22.12"),
  "npm error code EUSAGE",
  "npm error",
  "npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.",
  "npm error",
  "npm error Missing: left-pad@1.3.0 from lock file",
  "npm error",
  "npm error Clean install a project",
  "npm error",
  "npm error Usage:",
  "npm error npm ci",
  "npm error",
  "npm error Options:",
  "npm error [--install-strategy <hoisted|nested|shallow|linked>] [--legacy-bundling]",
  "npm error",
  'npm error Run "npm help ci" for more info',
  "npm error A complete log of this run can be found in: /tmp/npm-debug-0.log",
].join("\n")}
EOF
exit 1
`;

describe("scripts/setup.mjs", () => {
  const setup = (project: string, mode: "ok" | "out-of-sync") =>
    run(machineNode(), [join(ROOT, "scripts", "setup.mjs")], {
      cwd: project,
      env: { ...process.env, PATH: `${join(project, "bin")}${delimiter}${process.env.PATH ?? ""}`, FAKE_NPM: mode },
      timeoutMs: 30_000,
    });
  /** A project folder with a lock and the stand-in npm first on PATH. */
  const project = (name: string) => {
    const folder = join(dir, name);
    mkdirSync(join(folder, "bin"), { recursive: true });
    writeFileSync(join(folder, "package-lock.json"), '{ "lockfileVersion": 3 }\n');
    writeFileSync(join(folder, "bin", "npm"), FAKE_NPM);
    chmodSync(join(folder, "bin", "npm"), 0o755);
    return folder;
  };

  it("runs npm ci, replaces the EBADENGINE warnings with one line, keeps every other line, and installs once", async () => {
    const folder = project("setup-ok");
    const first = await setup(folder, "ok");
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(join(folder, "npm-calls.txt"), "utf8").trim()).toBe("ci --no-audit --no-fund");
    expect(first.stderr).not.toContain("EBADENGINE");
    expect(first.stderr).toContain('npm warn Unknown user config "nodedir"');
    expect(first.stdout).toContain("added 3 packages in 1s");
    expect(first.stdout).toMatch(/setup: 2 packages \(and this project\) asked for a newer Node than v\d+/);
    expect(first.stdout).toContain("the project runs on its own Node 22, node_modules/.bin/node");
    const lockHash = createHash("sha256").update(readFileSync(join(folder, "package-lock.json"))).digest("hex");
    expect(readFileSync(join(folder, "node_modules", ".dynmcp-lock"), "utf8")).toBe(lockHash);

    // Installed for this lock: nothing to do, npm not called again.
    const again = await setup(folder, "ok");
    expect(again.code).toBe(0);
    expect(again.stdout + again.stderr).toBe("");
    expect(readFileSync(join(folder, "npm-calls.txt"), "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("stops on a lock out of step with package.json: npm's reason kept, its usage text dropped, nothing marked", async () => {
    const folder = project("setup-out-of-sync");
    const r = await setup(folder, "out-of-sync");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("npm error Missing: left-pad@1.3.0 from lock file");
    expect(r.stderr).toContain("npm error A complete log of this run");
    expect(r.stderr).not.toContain("Usage:");
    expect(r.stderr).not.toContain("--install-strategy");
    expect(r.stderr).not.toContain("EBADENGINE");
    expect(r.stderr).toContain("setup: npm ci refused package-lock.json");
    // One attempt, no fallback to another install.
    expect(readFileSync(join(folder, "npm-calls.txt"), "utf8").trim().split("\n")).toEqual(["ci --no-audit --no-fund"]);
    expect(existsSync(join(folder, "node_modules", ".dynmcp-lock"))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// package.json's scripts on a fresh clone: the shell npm runs a script in looks `node` up once, before the install
// that brings the project's Node 22, so every step after setup must name node_modules/.bin/node itself

describe("npm scripts that install first", () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const installing = Object.entries(scripts).filter(([, line]) => line.startsWith("node scripts/setup.mjs && "));

  it("run nothing after setup on a `node` looked up on PATH", () => {
    expect(installing.map(([name]) => name)).toEqual(expect.arrayContaining(["test", "dev"]));
    for (const [name, line] of installing) {
      const after = line.slice("node scripts/setup.mjs && ".length);
      expect(after, `npm run ${name}`).not.toMatch(/(^|&&\s*|\|\|\s*|;\s*)node\s/);
    }
  });

  /**
   * A scratch project with the real script lines and a stand-in setup.mjs that "installs" a project Node which only
   * notes its arguments; npm is the machine's, run with the machine's PATH (no project folder on it).
   */
  const scratch = (name: string) => {
    const folder = join(dir, name);
    mkdirSync(join(folder, "scripts"), { recursive: true });
    writeFileSync(join(folder, "package.json"), JSON.stringify({ name: "scratch", private: true, scripts: { test: scripts.test, dev: scripts.dev } }));
    writeFileSync(
      join(folder, "scripts", "setup.mjs"),
      [
        'import { chmodSync, mkdirSync, writeFileSync } from "node:fs";',
        'mkdirSync("node_modules/.bin", { recursive: true });',
        `writeFileSync("node_modules/.bin/node", "#!/bin/sh\\necho \\"$@\\" >> project-node.txt\\n");`,
        'chmodSync("node_modules/.bin/node", 0o755);',
      ].join("\n"),
    );
    return folder;
  };
  const machinePath = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((folder) => folder && !folder.includes("node_modules"))
    .join(delimiter);

  it("hand every later step, and the arguments after --, to the project's Node on the first run", async () => {
    const folder = scratch("scripts-first-run");
    const test = await run("npm", ["test", "--", "--passWithNoTests", "nomatch"], { cwd: folder, env: { ...process.env, PATH: machinePath }, timeoutMs: 60_000 });
    expect(test.code, test.stdout + test.stderr).toBe(0);
    expect(readFileSync(join(folder, "project-node.txt"), "utf8").trim().split("\n")).toEqual(["scripts/test.ts --passWithNoTests nomatch"]);
    rmSync(join(folder, "node_modules"), { recursive: true });
    const dev = await run("npm", ["run", "dev"], { cwd: folder, env: { ...process.env, PATH: machinePath }, timeoutMs: 60_000 });
    expect(dev.code, dev.stdout + dev.stderr).toBe(0);
    expect(readFileSync(join(folder, "project-node.txt"), "utf8").trim().split("\n").at(-1)).toBe("scripts/dev.ts");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The team command: help, and the URL policy in `check`

describe("the team command", () => {
  it("prints its usage and exits 0 for --help and help; without a command it prints it as an error", async () => {
    for (const args of [["--help"], ["help"], ["check", "--help"]]) {
      const r = await teamCliAsync(args);
      expect(r.status, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^usage: npm run team -- <command>/);
      expect(r.stdout).toContain("check <config.json>");
      expect(r.stderr).toBe("");
    }
    const bare = await teamCliAsync([]);
    expect(bare.status).toBe(1);
    expect(bare.stderr).toMatch(/^usage: npm run team -- <command>/);
  });

  it("check names every upstream URL put would refuse, unless ALLOW_PRIVATE_UPSTREAMS=true", async () => {
    const file = join(dir, "private.json");
    writeFileSync(
      file,
      JSON.stringify({
        mcp: {
          public: { url: "https://mcp.example.com/mcp" },
          lan: { url: "https://10.1.2.3/mcp?api_key=k3y-in-the-query" },
          metadata: { url: "https://169.254.169.254/latest/meta-data" },
          local: { url: "http://127.0.0.1:3001/mcp" },
          internal: { url: "https://user:pa55word@mcp.corp.internal/mcp" },
          off: { url: "https://192.168.1.1/mcp", enabled: false },
        },
      }),
    );
    const strict = await teamCliAsync(["check", file], { ALLOW_PRIVATE_UPSTREAMS: "" });
    expect(strict.status).toBe(1);
    expect(strict.stdout).toContain("valid shape (config-file mode, 5 enabled upstream(s), 0 lazy)");
    expect(strict.stderr).toContain("put would refuse 4 upstream URL(s)");
    expect(strict.stderr).toContain("mcp.lan.url (https://10.1.2.3): upstream URLs cannot point at loopback, private");
    expect(strict.stderr).toMatch(/mcp\.metadata\.url \(https:\/\/169\.254\.169\.254\): .*metadata/);
    expect(strict.stderr).toContain("mcp.local.url (http://127.0.0.1:3001): upstream URLs must use https");
    expect(strict.stderr).toContain("mcp.internal.url (https://mcp.corp.internal): user:password@ in upstream URLs is not allowed");
    expect(strict.stderr).toContain("ALLOW_PRIVATE_UPSTREAMS=true lifts that for local use only");
    expect(strict.stderr).not.toContain("mcp.public.url");
    expect(strict.stderr).not.toContain("mcp.off.url");
    // Neither a key in a query nor a password is echoed.
    expect(strict.stdout + strict.stderr).not.toContain("k3y-in-the-query");
    expect(strict.stdout + strict.stderr).not.toContain("pa55word");

    // Local use: only the credentials in the URL are still refused.
    const lax = await teamCliAsync(["check", file], { ALLOW_PRIVATE_UPSTREAMS: "true" });
    expect(lax.status).toBe(1);
    expect(lax.stderr).toContain("put would refuse 1 upstream URL(s) (with ALLOW_PRIVATE_UPSTREAMS=true");
    expect(lax.stderr).toContain("mcp.internal.url");

    const fine = join(dir, "fine.json");
    writeFileSync(fine, JSON.stringify({ mcp: { local: { url: "http://127.0.0.1:3001/mcp", headers: { Authorization: "Bearer ${secret:TOKEN}" } } } }));
    const allowed = await teamCliAsync(["check", fine], { ALLOW_PRIVATE_UPSTREAMS: "true" });
    expect(allowed.status, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain("every upstream URL allowed (with ALLOW_PRIVATE_UPSTREAMS=true");
    expect(allowed.stdout).toContain("put checks that the team has the secrets it references: TOKEN");
    expect((await teamCliAsync(["check", fine], { ALLOW_PRIVATE_UPSTREAMS: "" })).status).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// examples/session.ts against `wrangler dev`, with the demo team of `npm run dev`

describe("examples/session.ts: one session through wrangler dev", () => {
  let everything: Running;
  let reference: Running;
  let proxy: Running;
  let token: string;
  let url: string;

  beforeAll(async () => {
    const state = join(dir, "state");
    [everything, reference] = await Promise.all([startEverything(), startEverything()]);
    // The demo team as scripts/dev.ts seeds it: one eager upstream, one lazy.
    token = provisionTeam(dir, state, "demo", {
      mcp: {
        everything: { transport: "streamable-http", url: everything.url },
        reference: {
          transport: "streamable-http",
          url: reference.url,
          description: "A second copy of the MCP reference server. Load it to try load_mcp.",
        },
      },
    });
    proxy = await startWranglerDev({ persistTo: state, vars: { SESSION_KEY: "first-run" }, port: await freePort() });
    url = `${proxy.url}/t/demo/mcp`;
  });

  afterAll(async () => {
    await Promise.all([proxy?.stop(), everything?.stop(), reference?.stop()]);
  });

  const example = (args: string[], env: Record<string, string>) =>
    run(process.execPath, [join(ROOT, "examples", "session.ts"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      timeoutMs: 100_000,
    });

  it("lists the meta-tools, loads the lazy server, discovers and calls its tool, and ends the session", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await example([url], { DYNMCP_TOKEN: token });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const lines = r.stdout.trim().split("\n");
      expect(lines[0]).toBe(`1. connected to ${url}: one session from here to the end`);
      expect(lines[1]).toBe("2. tools/list: discover_tool, use_tool, load_mcp");
      // Each run is a new session: what the previous one loaded is not loaded here.
      expect(lines[2]).toBe("   lazy servers offered, not loaded yet: reference");
      expect(lines[3]).toMatch(/^3\. load_mcp reference: [1-9]\d* tools, \d+ resources, [1-9]\d* prompts \(notifications\/tools\/list_changed received: yes\)$/);
      expect(lines[4]).toBe("4. discover_tool reference/get-sum: takes a (number), b (number)");
      expect(lines[5]).toBe('5. use_tool reference/get-sum {"a":2,"b":3}: The sum of 2 and 3 is 5.');
      expect(lines[6]).toMatch(/^6\. session ended \(DELETE\)/);
      expect(r.stdout + r.stderr).not.toContain(token);
    }
  }, 240_000);

  it("says why it failed, without printing the token", async () => {
    const missing = await example([url], { DYNMCP_TOKEN: "" });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("session failed: set DYNMCP_TOKEN");
    const forged = "dmt_0000000000000000_" + "A".repeat(43);
    const refused = await example([url], { DYNMCP_TOKEN: forged });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^session failed: /);
    expect(refused.stderr).toContain("the proxy answered HTTP 401: is DYNMCP_TOKEN a token of the team in the URL?");
    expect(refused.stdout + refused.stderr).not.toContain(forged);
    const unknown = await example([url, "nowhere"], { DYNMCP_TOKEN: token });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('session failed: the catalog offers no lazy server named "nowhere" to load');
  }, 120_000);

  it("separate Inspector CLI calls are separate sessions: a server loaded in one is not loaded in the next", async () => {
    const loaded = await inspector(url, token, ["--method", "tools/call", "--tool-name", "load_mcp", "--tool-arg", "mcp_name=reference"]);
    expect(loaded.status, loaded.raw).toBe(0);
    // Its index names the tool and the name use_tool calls it by (`reference/<tool>`).
    expect(text(loaded.json)).toMatch(/^- get-sum: /m);
    expect(text(loaded.json)).toContain('called with use_tool as "reference/<tool>"');
    const used = await inspector(url, token, [
      "--method", "tools/call", "--tool-name", "use_tool",
      "--tool-arg", "tool_name=reference/get-sum", "--tool-arg", 'tool_input={"a":2,"b":3}',
    ]);
    expect(JSON.stringify(used.json), used.raw).toContain('The server \\"reference\\" is not loaded yet');
    expect((used.json as { isError?: boolean }).isError).toBe(true);
  }, 120_000);

  it("runs the README's code-mode command: one program calls the eager server and loads and calls the lazy one", async () => {
    const ran = await inspector(`${url}?view=code`, token, [
      "--method", "tools/call", "--tool-name", "execute",
      "--tool-arg", "code=const a = await everything.get_sum({ a: 2, b: 3 }); const b = await reference.get_sum({ a: 4, b: 5 }); return [a, b];",
    ]);
    expect(ran.status, ran.raw).toBe(0);
    expect((ran.json as { isError?: boolean }).isError).toBeFalsy();
    expect(JSON.parse(text(ran.json))).toEqual(["The sum of 2 and 3 is 5.", "The sum of 4 and 5 is 9."]);
  }, 120_000);
});
