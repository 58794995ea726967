// The agent-path benchmark's pure parts (bench/lib/agent-reading.ts, agent-arguments.ts): what its scripted agent
// reads of the proxy's answers and the arguments it builds, over answers the proxy's own renderers make from
// recorded corpus tools, so a change in wording shows up here before it silently fails a benchmark run.
import { describe, expect, it } from "vitest";
import { buildArguments } from "../../bench/lib/agent-arguments.ts";
import {
  catalogLazyServers,
  catalogToolServers,
  executeNamespaces,
  fieldsOfDeclaration,
  fieldsOfLookup,
  fieldsOfSchema,
  hintedCall,
  namedServers,
  offeredServers,
  searchHits,
  searchPaths,
  toolsetHandle,
} from "../../bench/lib/agent-reading.ts";
import { loadCorpus } from "../../harness/replay-server.ts";
import { DECLARATION_LIMITS, declareMethod } from "../../src/catalog/declarations.ts";
import { renderSearchHits, renderToolDetails } from "../../src/catalog/render.ts";
import { executeDescription } from "../../src/views/code/definitions.ts";

const gitlab = loadCorpus("zereight__mcp-gitlab");
const azure = loadCorpus("azure-devops__mcp");
const tool = (server: typeof gitlab, name: string) => server.tools.find((t) => t.name === name)!;

describe("reading the top hit and what is offered", () => {
  const hits = [
    { name: "gitlab/list_merge_request_changed_files", description: "List files changed in a merge request" },
    { name: "gitlab/get_merge_request", description: "Get details of a merge request" },
  ];
  const lazy = [{ name: "azure-devops", description: "Azure DevOps: projects, pipelines." }];

  it("takes the structured names first, in order", () => {
    const answer = { text: "whatever the text says", structured: { tools: hits, servers: lazy }, isError: false };
    expect(searchHits(answer)).toEqual(["gitlab/list_merge_request_changed_files", "gitlab/get_merge_request"]);
    expect(offeredServers(answer)).toEqual(["azure-devops"]);
  });

  it("reads discover_tool's text when there is no structured content, the offered servers apart from the hits", () => {
    const answer = { text: renderSearchHits("files changed", hits, lazy), isError: false };
    expect(searchHits(answer)).toEqual(["gitlab/list_merge_request_changed_files", "gitlab/get_merge_request"]);
    expect(offeredServers(answer)).toEqual(["azure-devops"]);
  });

  it("reads a nothing-useful answer: its weak hits, and the closest servers not loaded yet", () => {
    const text = [
      'No loaded API does what "send a fax" asks.',
      'Closest servers (see a server\'s APIs with describe {"path": "<namespace>"}):\n- fax (not loaded): Send faxes\n- stripe: Payments',
      "Weak matches, probably not what was asked:\n- stripe.send_invoice: Send an invoice\n- github.create_issue: Create an issue",
    ].join("\n\n");
    expect(searchPaths({ text, isError: false })).toEqual(["stripe.send_invoice", "github.create_issue"]);
    expect(offeredServers({ text, isError: false })).toEqual(["fax"]);
    const meta = text.replace("API", "tool").replace("stripe.send_invoice", "stripe/send_invoice").replace("github.create_issue", "github/create_issue");
    expect(searchHits({ text: meta, isError: false })).toEqual(["stripe/send_invoice", "github/create_issue"]);
  });

  it("reads the code view's search: paths best first, then the namespaces not loaded yet", () => {
    const text = "github.get_pull_request_files: Get the list of files\ngithub.get_pull_request: Get one\n\nNamespaces not loaded yet that match (search one by name):\ngitlab: GitLab through its API";
    expect(searchPaths({ text, isError: false })).toEqual(["github.get_pull_request_files", "github.get_pull_request"]);
    expect(offeredServers({ text, isError: false })).toEqual(["gitlab"]);
  });

  it("reads a narrowed search that answers a namespace's methods by their bare names as paths in it", () => {
    const text = "gitlab (118 methods):\n- get_issue: Get one issue\n- list_issues: List issues";
    expect(searchPaths({ text, isError: false }, "gitlab")).toEqual(["gitlab.get_issue", "gitlab.list_issues"]);
    expect(searchPaths({ text, isError: false })).toEqual([]);
  });

  it("names no hit in an answer that has none", () => {
    const text = renderSearchHits("nothing", [], []);
    expect(searchHits({ text, isError: false })).toEqual([]);
  });
});

describe("reading handles, hints and the servers a catalog names", () => {
  it("reads a toolset handle from structured content, else from the text", () => {
    expect(toolsetHandle({ text: "", structured: { toolset: "ts.abc" }, isError: false })).toBe("ts.abc");
    expect(toolsetHandle({ text: 'Loaded "gitlab" into toolset "ts.def": pass "toolset": "ts.def" with use_tool', isError: false })).toBe("ts.def");
    expect(toolsetHandle({ text: "Toolset `ts.ghi` holds gitlab: pass it as `toolset`.", isError: false })).toBe("ts.ghi");
    expect(toolsetHandle({ text: "Loaded gitlab.", isError: false })).toBeUndefined();
  });

  it("copies a call an error names, when it names one of the tools the agent has", () => {
    const text = 'The server "gitlab" is lazy and not loaded yet: call load_mcp {"mcp_name":"gitlab","toolset":"ts.x"}, then search it again.';
    expect(hintedCall({ text, isError: true }, ["load_mcp"])).toEqual({ name: "load_mcp", arguments: { mcp_name: "gitlab", toolset: "ts.x" } });
    expect(hintedCall({ text, isError: true }, ["use_tool"])).toBeUndefined();
  });

  it("finds server names in a user's words, product capitals and hyphens as users write them", () => {
    expect(namedServers("Show me build 5 on Azure DevOps, not GitLab.", ["gitlab", "azure-devops", "github"])).toEqual(["gitlab", "azure-devops"]);
    expect(namedServers("on the google maps page", ["google_maps"])).toEqual(["google_maps"]);
  });

  it("reads the servers of discover_tool's catalog and the namespaces of execute's description", () => {
    const catalog = "Intro.\n\n<mcp_servers>\ngitlab: GitLab.\nazure-devops: Azure DevOps.\n</mcp_servers>\n\n<tools>\nHint line.\nbrave-search:\n- brave_web_search: Searches\ngithub (26 tools, names only): a, b\n</tools>";
    expect(catalogLazyServers(catalog)).toEqual(["gitlab", "azure-devops"]);
    expect(catalogToolServers(catalog)).toEqual(["brave-search", "github"]);
    expect(executeNamespaces(executeDescription([{ namespace: "github" }, { namespace: "azure_devops", description: "Azure DevOps." }]))).toEqual(["github", "azure_devops"]);
    expect(executeNamespaces(executeDescription([{ namespace: "a" }, { namespace: "b" }, { namespace: "c" }], { kind: "names", named: 2 }))).toEqual(["a", "b"]);
  });
});

describe("reading a tool's fields", () => {
  const blame = tool(gitlab, "get_file_blame");

  it("reads the same fields from the lookup's structured schema, its text, and the code view's declaration", () => {
    const fromSchema = fieldsOfSchema(blame.inputSchema).map((f) => [f.name, f.required]);
    const text = renderToolDetails({ name: "gitlab/get_file_blame", description: blame.description, inputSchema: blame.inputSchema as Record<string, unknown> });
    expect(fieldsOfLookup({ text, structured: { inputSchema: blame.inputSchema }, isError: false }).map((f) => [f.name, f.required])).toEqual(fromSchema);
    expect(fieldsOfLookup({ text, isError: false }).map((f) => [f.name, f.required])).toEqual(fromSchema);
    const declared = declareMethod("get_file_blame", blame as never, { ...DECLARATION_LIMITS, brief: true }, []).text;
    expect(fieldsOfDeclaration(declared, "get_file_blame").map((f) => [f.name, f.required])).toEqual(fromSchema);
    expect(fromSchema.filter(([, required]) => required).map(([name]) => name)).toEqual(["project_id", "file_path", "ref"]);
  });

  it("reads a declaration's string choices as an enum", () => {
    const log = tool(azure, "pipelines_build_log");
    const declared = declareMethod("pipelines_build_log", log as never, { ...DECLARATION_LIMITS, brief: true }, []).text;
    expect(fieldsOfDeclaration(declared, "pipelines_build_log").find((f) => f.name === "action")?.enum).toEqual(["list", "get_content"]);
  });
});

describe("building arguments from the user's values", () => {
  it("maps values to fields by their names, synonyms and descriptions, typed as the schema says", () => {
    const fields = fieldsOfSchema(tool(gitlab, "create_note").inputSchema);
    expect(buildArguments(fields, { project: "acme/web", issue: 7, comment: "Ships Friday." }, "reply with a comment on an issue")).toEqual({
      project_id: "acme/web",
      noteable_iid: "7",
      body: "Ships Friday.",
      noteable_type: "issue",
    });
  });

  it("leaves a value no field's name asks for out of the optional fields whose descriptions mention it", () => {
    const list = fieldsOfSchema(tool(gitlab, "list_issues").inputSchema);
    expect(buildArguments(list, { project: "acme/web", issue: "9" }, "list the issues of a project")).toEqual({ project_id: "acme/web" });
  });

  it("takes a choice from the request's words and gives numbers their type", () => {
    const fields = fieldsOfSchema(tool(azure, "pipelines_build").inputSchema);
    const args = buildArguments(fields, { project: "Fabrikam", build: "5123" }, "get a build's status");
    expect(args).toMatchObject({ project: "Fabrikam", buildId: 5123, action: "get_status" });
  });

  it("sets an optional choice only when the request names it, and gives a bare `name` the value the request is about", () => {
    const update = fieldsOfSchema(tool(gitlab, "update_issue").inputSchema);
    expect(buildArguments(update, { project: "acme/web", issue: "9" }, "change the state of an issue to closed")).toEqual({ project_id: "acme/web", issue_iid: "9", state_event: "close" });
    expect(buildArguments(update, { project: "acme/web", issue: "9" }, "edit an issue")).toEqual({ project_id: "acme/web", issue_iid: "9" });
    const logs = fieldsOfSchema(loadCorpus("mcp-server-kubernetes").tools.find((t) => t.name === "kubectl_logs")!.inputSchema);
    expect(buildArguments(logs, { pod: "web-7f9", namespace: "shop" }, "what a pod has been printing")).toMatchObject({ resourceType: "pod", name: "web-7f9", namespace: "shop" });
  });
});
