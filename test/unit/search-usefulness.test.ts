// A search's judgement of its hits (src/catalog/search-usefulness.ts) on a crafted catalog, words only and with the
// static stage: a query of made-up words and one for something no server does are judged not useful (the ranking
// still answers its weak best); a query a tool does is useful, whatever its limit. And the nothing-useful answer's
// text and closest servers (src/catalog/render-nothing-useful.ts).
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { EMBEDDING_TABLE_PATH } from "../../scripts/build-embedder.ts";
import { staticEmbedder, type StaticEmbedder } from "../../src/catalog/embedder.ts";
import { readEmbeddingTable } from "../../src/catalog/embedding-table.ts";
import { closestServers, renderNothingUseful } from "../../src/catalog/render-nothing-useful.ts";
import { indexTools, judgedSearch, type SearchInput, type ToolIndex } from "../../src/catalog/search.ts";
import { quantise, toolText } from "../../src/catalog/semantic-vectors.ts";

const tool = (server: string, serverDescription: string, name: string, description: string): SearchInput => ({
  name: `${server}/${name}`,
  server,
  serverDescription,
  tool: name,
  description,
});
const PAYMENTS = "Payments: charges, refunds, invoices and customers.";
const MAIL = "Mail: send and read email.";
const FILES = "Files on the local disk.";
const CATALOG = [
  [
    tool("payments", PAYMENTS, "create_refund", "Refund a charge, in whole or in part."),
    tool("payments", PAYMENTS, "list_charges", "List the charges of an account."),
    tool("payments", PAYMENTS, "create_invoice", "Create an invoice for a customer."),
  ],
  [tool("mail", MAIL, "send_email", "Send an email to a recipient."), tool("mail", MAIL, "list_inbox", "List the messages in the inbox.")],
  [tool("files", FILES, "read_file", "Read a file from the disk."), tool("files", FILES, "write_file", "Write text to a file.")],
];

let embedder: StaticEmbedder;
let indexes: ToolIndex[];

beforeAll(() => {
  embedder = staticEmbedder(readEmbeddingTable(readFileSync(EMBEDDING_TABLE_PATH)));
  indexes = CATALOG.map((tools) => indexTools(tools));
});

const meaningOf = (query: string) => ({
  vector: embedder.embedOne(query),
  vectors: indexes.map((index) => quantise(index.tools.list().map((t) => embedder.embedOne(toolText(t))), embedder.dimension, embedder.modelId)),
});

const NONSENSE = "zorblax quindle frumpage";
/** Shares "send" with send_email, and nothing else with any tool. */
const ABSENT = "send a fax to the insurance company about the claim";
const GOOD = "refund the charge of a customer";

describe("a search's judgement of its hits", () => {
  for (const stage of ["off", "static"] as const) {
    const search = (query: string, limit?: number) => judgedSearch(indexes, query, { limit, meaning: stage === "static" ? meaningOf(query) : undefined });

    it(`judges a query a tool does useful (stage ${stage}), whatever the limit`, () => {
      for (const limit of [undefined, 1]) {
        const { hits, judged } = search(GOOD, limit);
        expect(hits[0]?.name).toBe("payments/create_refund");
        expect(judged.useful).toBe(true);
        expect(judged.coverage).toBeGreaterThan(0.5);
      }
    });

    it(`judges made-up words not useful (stage ${stage}), though the stage still ranks its nearest`, () => {
      const { hits, judged } = search(NONSENSE);
      expect(judged.useful).toBe(false);
      expect(judged.coverage).toBe(0);
      if (stage === "static") expect(judged.cosine).toBeLessThan(0.385);
      else expect(hits).toEqual([]);
    });

    it(`judges a query for something no server does not useful (stage ${stage}), though a tool shares a word`, () => {
      const { hits, judged } = search(ABSENT);
      expect(hits.map((h) => h.name)).toContain("mail/send_email");
      expect(judged.useful).toBe(false);
      expect(judged.coverage).toBeLessThan(0.16);
    });
  }
});

describe("the nothing-useful answer", () => {
  const describeServer = (server: string) => ({ payments: PAYMENTS, mail: MAIL })[server];
  const hits = [
    { name: "mail/send_email", server: "mail", description: "Send an email to a recipient" },
    { name: "mail/list_inbox", server: "mail", description: "List the messages in the inbox" },
    { name: "payments/list_charges", server: "payments", description: "List the charges of an account" },
    { name: "files/read_file", server: "files", description: "Read a file from the disk" },
  ];

  it("names the lazy servers that match first, then the weak hits' servers, each once, at most 3", () => {
    const closest = closestServers(hits, [{ name: "fax", description: "Send and receive faxes" }], describeServer);
    expect(closest).toEqual([
      { server: "fax", description: "Send and receive faxes", loaded: false },
      { server: "mail", description: "Mail: send and read email", loaded: true },
      { server: "payments", description: "Payments: charges, refunds, invoices and customers", loaded: true },
    ]);
  });

  it("says so first, then the closest servers with the calls that open them, then at most 3 weak hits marked as weak", () => {
    const closest = closestServers(hits, [{ name: "fax", description: "Send and receive faxes" }], describeServer);
    const text = renderNothingUseful(ABSENT, closest, hits, {
      thing: "tool",
      shown: (s) => s,
      openLoaded: `discover_tool {"server": "<name>"}`,
      openLazy: `load_mcp {"mcp_name": "<name>"}`,
    });
    expect(text.split("\n\n")).toEqual([
      `No loaded tool does what "${ABSENT}" asks.`,
      [
        `Closest servers (see a server's tools with discover_tool {"server": "<name>"}; load one not loaded yet with load_mcp {"mcp_name": "<name>"}):`,
        "- fax (not loaded): Send and receive faxes",
        "- mail: Mail: send and read email",
        "- payments: Payments: charges, refunds, invoices and customers",
      ].join("\n"),
      [
        "Weak matches, probably not what was asked:",
        "- mail/send_email: Send an email to a recipient",
        "- mail/list_inbox: List the messages in the inbox",
        "- payments/list_charges: List the charges of an account",
      ].join("\n"),
    ]);
  });
});
