// Pure: BM25F scoring of a set of indexes against a weighted query. Document frequencies and field lengths are the
// set's, so scores compare across upstreams; a tool with a term in its own fields and in its server's is counted once.
// The best few are kept in order as they are found (score, then name), so the same state answers the same bytes.
import { COUNT_BITS, COUNT_MAX, SEARCH_FIELDS, SERVER_FIELD_COUNT, TOOL_FIELD_COUNT, type SearchField, type ToolIndex } from "./search-index.ts";
import { unionOf, type Union } from "./search-union.ts";

export interface FieldRanking {
  /** How much a term in this field counts against one in another. */
  weight: number;
  /** Length normalisation (0: none, 1: full), as BM25's b. */
  b: number;
}

export interface Ranking {
  /** Term-frequency saturation, as BM25's k1. */
  k1: number;
  fields: Record<SearchField, FieldRanking>;
  /** How much a word's SYNONYM_GROUPS equivalents weigh against the query's own words (0: not used). */
  synonyms: number;
  /** Query words that name a server only in part (`mongo`, `postgresql`) count as its name (4 letters or more). */
  serverPrefixes: boolean;
  /** Drop FILLER_WORDS from queries. */
  filler: boolean;
  /**
   * The share of its score a tool keeps when no query term is in its description (summary or rest): it matched by
   * its name, parameters or server alone. Where many servers have tools of the same name, or many tools a server
   * described in the query's words, the one whose own description agrees with the query is the one meant.
   */
  undescribed: number;
  /** The share of its score a tool keeps when no query term is in its name (as `undescribed`, for the name). */
  unnamed: number;
}

/** The ranking discover_tool uses, chosen on bench/selection's dev queries (`node bench/selection.ts`, BENCHMARKS.md). */
export const DEFAULT_RANKING: Ranking = {
  k1: 2,
  fields: {
    name: { weight: 3, b: 0.5 },
    summary: { weight: 1.5, b: 0.75 },
    description: { weight: 0.5, b: 0.75 },
    parameters: { weight: 0.3, b: 0.75 },
    server: { weight: 1.5, b: 0.75 },
    serverDescription: { weight: 1.5, b: 0.75 },
  },
  synonyms: 0.5,
  serverPrefixes: true,
  filler: true,
  undescribed: 0.7,
  unnamed: 0.7,
};

/** A tool that shares a term with the query: index `index` of the searched list, its tool `tool`. */
export interface Candidate {
  index: number;
  tool: number;
  score: number;
  name: string;
}

/** Whether `a` ranks before `b`: a higher score, or an equal one and a name first in code-point order. */
export const better = (a: Candidate, b: Candidate): boolean => a.score > b.score || (a.score === b.score && a.name < b.name);

/** Scratch space of `score`, grown to the largest union searched and cleared after each search. */
let scratchScores = new Float64Array(0);
let scratchSeen = new Int32Array(0);
let scratchAgreed = new Uint8Array(0);

/** One scoring of a query: the union searched, its statistics, and the scores so far. */
interface Pass {
  list: readonly ToolIndex[];
  u: Union;
  /** The ranking of each of SEARCH_FIELDS. */
  fields: FieldRanking[];
  /** Each field's average length over the union. */
  average: number[];
  k1: number;
  /** Only tools of this server count. */
  onlyServer: string | undefined;
  scores: Float64Array;
  /** The last query term that credited each tool (0: none yet), so a server's share is not counted twice. */
  seen: Int32Array;
  /** For each tool, NAMED if a query term is in its name, DESCRIBED if one is in its summary or description. */
  agreed: Uint8Array;
  /** The tools credited, in the order first credited, and the member each is of. */
  touched: number[];
  owner: number[];
}

/** The term's server-field tf for each server having it, by member; and how many tools those servers have. */
function serverFrequencies(pass: Pass, serversAt: ArrayLike<number>): { serverTf: Map<number, Float64Array>; df: number } {
  const { list, u, fields, average } = pass;
  const serverTf = new Map<number, Float64Array>();
  let df = 0;
  for (let k = 0; k < serversAt.length; k += 3) {
    const i = serversAt[k]!;
    const s = serversAt[k + 1]!;
    const at = serversAt[k + 2]!;
    const server = list[i]!.servers[s]!;
    let tf = 0;
    for (let f = 0; f < SERVER_FIELD_COUNT; f++) {
      const n = server.counts[at * SERVER_FIELD_COUNT + f]!;
      if (n === 0) continue;
      const { weight: w, b } = fields[TOOL_FIELD_COUNT + f]!;
      tf += (w * n) / (1 - b + (b * server.lengths[f]!) / average[TOOL_FIELD_COUNT + f]!);
    }
    if (tf <= 0) continue;
    let tfs = serverTf.get(i);
    if (!tfs) serverTf.set(i, (tfs = new Float64Array(list[i]!.servers.length)));
    tfs[s] = tf;
    df += u.preps[i]!.serverSize[s]!;
  }
  return { serverTf, df };
}

/** The tools with the term in their own fields whose server's fields do not have it (those were counted already). */
function postingFrequency(pass: Pass, postingsAt: ArrayLike<number>, serverTf: ReadonlyMap<number, Float64Array>): number {
  let df = 0;
  for (let k = 0; k < postingsAt.length; k += 2) {
    const i = postingsAt[k]!;
    const index = pass.list[i]!;
    const at = postingsAt[k + 1]!;
    const start = index.starts[at]!;
    const end = index.starts[at + 1]!;
    const tfs = serverTf.get(i);
    if (!tfs) {
      df += end - start;
      continue;
    }
    const toolServer = pass.u.preps[i]!.toolServer;
    for (let p = start; p < end; p++) {
      const s = toolServer[index.postingTools[p]!]!;
      if (!(s >= 0 && tfs[s]! > 0)) df++;
    }
  }
  return df;
}

/** Adds one query term's share to a tool's score (union number `key`, of member `i`). */
function credit(pass: Pass, q: number, idf: number, key: number, i: number, tf: number): void {
  if (tf <= 0) return;
  if (pass.seen[key] === 0) {
    pass.touched.push(key);
    pass.owner.push(i);
  }
  pass.seen[key] = q;
  pass.scores[key] = pass.scores[key]! + (idf * tf) / (pass.k1 + tf);
}

/** Credits every tool with the term in its own fields, its server's share added. */
function creditPostings(pass: Pass, q: number, idf: number, postingsAt: ArrayLike<number>, serverTf: ReadonlyMap<number, Float64Array>): void {
  const { list, u, fields, average, onlyServer } = pass;
  for (let k = 0; k < postingsAt.length; k += 2) {
    const i = postingsAt[k]!;
    const index = list[i]!;
    const at = postingsAt[k + 1]!;
    const end = index.starts[at + 1]!;
    const base = u.offsets[i]!;
    const tfs = serverTf.get(i);
    const toolServer = u.preps[i]!.toolServer;
    const lengths = index.lengths;
    for (let p = index.starts[at]!; p < end; p++) {
      const tool = index.postingTools[p]!;
      if (onlyServer !== undefined && index.tools.server(tool) !== onlyServer) continue;
      const packed = index.postingCounts[p]!;
      let tf = 0;
      pass.agreed[base + tool]! |= (packed & COUNT_MAX ? NAMED : 0) | ((packed >> COUNT_BITS) & DESCRIPTION_MASK ? DESCRIBED : 0);
      for (let f = 0; f < TOOL_FIELD_COUNT; f++) {
        const n = (packed >> (f * COUNT_BITS)) & COUNT_MAX;
        if (n === 0) continue;
        const { weight: w, b } = fields[f]!;
        tf += (w * n) / (1 - b + (b * lengths[tool * TOOL_FIELD_COUNT + f]!) / average[f]!);
      }
      const s = toolServer[tool]!;
      if (tfs && s >= 0) tf += tfs[s]!;
      credit(pass, q, idf, base + tool, i, tf);
    }
  }
}

/** Credits the tools of the servers having the term that were not credited above (the term is not in their fields). */
function creditServers(pass: Pass, q: number, idf: number, serverTf: ReadonlyMap<number, Float64Array>): void {
  const { list, u, onlyServer } = pass;
  for (const [i, tfs] of serverTf) {
    const base = u.offsets[i]!;
    const servers = list[i]!.servers;
    const toolServer = u.preps[i]!.toolServer;
    // One pass over the member's tools, each credited with its server's share (its tools are not listed per server).
    for (let tool = 0; tool < toolServer.length; tool++) {
      const s = toolServer[tool]!;
      const tf = s >= 0 ? tfs[s]! : 0;
      if (!(tf > 0) || (onlyServer !== undefined && servers[s]!.name !== onlyServer)) continue;
      if (pass.seen[base + tool] !== q) credit(pass, q, idf, base + tool, i, tf);
    }
  }
}

const NONE = new Uint16Array(0);
/** The summary's and description's counts in a posting's packed counts, shifted past the name's. */
const DESCRIPTION_MASK = (1 << (2 * COUNT_BITS)) - 1;
const NAMED = 1;
const DESCRIBED = 2;

/** A tool's score scaled by the ranking's shares for a name or description that shares nothing with the query. */
function agreement(pass: Pass, ranking: Ranking): void {
  if (ranking.undescribed === 1 && ranking.unnamed === 1) return;
  for (const key of pass.touched) {
    const agreed = pass.agreed[key]!;
    const share = (agreed & NAMED ? 1 : ranking.unnamed) * (agreed & DESCRIBED ? 1 : ranking.undescribed);
    pass.scores[key] = pass.scores[key]! * share;
  }
}

/** Scores the `q`-th query term (weighted `weight`) into the pass. */
function scoreTerm(pass: Pass, q: number, term: string, weight: number): void {
  const postingsAt = pass.u.terms.get(term) ?? NONE;
  const serversAt = pass.u.serverTerms.get(term) ?? NONE;
  if (postingsAt.length === 0 && serversAt.length === 0) return;
  const { serverTf, df: serverDf } = serverFrequencies(pass, serversAt);
  const df = serverDf + postingFrequency(pass, postingsAt, serverTf);
  if (df === 0) return;
  const idf = weight * Math.log(1 + (pass.u.count - df + 0.5) / (df + 0.5));
  creditPostings(pass, q, idf, postingsAt, serverTf);
  creditServers(pass, q, idf, serverTf);
}

/** The candidate for the k-th tool credited. */
function candidateOf(pass: Pass, k: number): Candidate {
  const key = pass.touched[k]!;
  const i = pass.owner[k]!;
  const tool = key - pass.u.offsets[i]!;
  return { index: i, tool, score: pass.scores[key]!, name: pass.list[i]!.tools.name(tool) };
}

/** The best `limit`, kept sorted by insertion (25 for an answer, the semantic stage's pool): a candidate is made only for a tool that enters. */
function bestCandidates(pass: Pass, limit: number): Candidate[] {
  const out: Candidate[] = [];
  pass.touched.forEach((key, k) => {
    const value = pass.scores[key]!;
    if (!(value > 0)) return;
    const last = out[out.length - 1];
    if (out.length === limit && last && value < last.score) return;
    const c = candidateOf(pass, k);
    if (out.length === limit && last && !better(c, last)) return;
    let at = out.length;
    while (at > 0 && better(c, out[at - 1]!)) at--;
    out.splice(at, 0, c);
    if (out.length > limit) out.pop();
  });
  return out;
}

/** Every tool credited with a positive score, unsorted. */
function allCandidates(pass: Pass): Candidate[] {
  const out: Candidate[] = [];
  pass.touched.forEach((key, k) => {
    if (pass.scores[key]! > 0) out.push(candidateOf(pass, k));
  });
  return out;
}

/** A pass over the union of `list`, on the scratch space grown to its size. */
function startPass(list: readonly ToolIndex[], u: Union, ranking: Ranking, onlyServer: string | undefined): Pass {
  if (scratchScores.length < u.count) {
    scratchScores = new Float64Array(u.count);
    scratchSeen = new Int32Array(u.count);
    scratchAgreed = new Uint8Array(u.count);
  }
  return {
    list,
    u,
    fields: SEARCH_FIELDS.map((f) => ranking.fields[f]),
    average: u.totals.map((total) => Math.max(total / u.count, 1e-9)),
    k1: ranking.k1,
    onlyServer,
    scores: scratchScores,
    seen: scratchSeen,
    agreed: scratchAgreed,
    touched: [],
    owner: [],
  };
}

/**
 * The tools of `list` sharing a term with the weighted query (only `onlyServer`'s, when given), scored: the best
 * `limit` sorted (score, then name), or with no limit every one, unsorted.
 */
export function score(list: readonly ToolIndex[], query: ReadonlyMap<string, number>, ranking: Ranking, onlyServer: string | undefined, limit: number | undefined): Candidate[] {
  if (query.size === 0 || list.length === 0) return [];
  const u = unionOf(list);
  if (u.count === 0) return [];
  const pass = startPass(list, u, ranking, onlyServer);
  let q = 0;
  for (const [term, weight] of query) scoreTerm(pass, ++q, term, weight);
  agreement(pass, ranking);
  const out = limit === undefined ? allCandidates(pass) : bestCandidates(pass, limit);
  for (const key of pass.touched) {
    pass.scores[key] = 0;
    pass.seen[key] = 0;
    pass.agreed[key] = 0;
  }
  return out;
}
