// `node scripts/check-sizes.ts` (part of `npm test`): every file in src/ has at most MAX_FILE_LINES lines and every
// function in it at most MAX_FUNCTION_LINES, counted from the line it starts on to the line it ends on. A closure
// counts on its own, and its lines count in the function around it too: a long closure makes both too long, which
// is meant (split the closure out). Why these limits: docs/development.md.
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { SRC_DIR, readSources, scriptKind } from "./check-layers.ts";

export const MAX_FILE_LINES = 350;
export const MAX_FUNCTION_LINES = 80;

export interface SizeProblem {
  file: string;
  /** 1-based line where the file or function starts. */
  line: number;
  lines: number;
  /** The function's name as written (or what it is, for one without a name); undefined for the whole file. */
  what?: string;
}

/** Lines of a text: a last line without its newline counts, a trailing newline does not add one. */
function lineCount(text: string): number {
  if (text.length === 0) return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

function nameOf(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (node.name) return node.name.getText(file);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(file);
  return ts.isArrowFunction(node) ? "(arrow function)" : "(function)";
}

/** Pure: the files and functions of the given sources (file → text) over the limits. */
export function sizeProblems(sources: ReadonlyMap<string, string>, maxFile = MAX_FILE_LINES, maxFunction = MAX_FUNCTION_LINES): SizeProblem[] {
  const problems: SizeProblem[] = [];
  for (const [file, text] of [...sources].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const lines = lineCount(text);
    if (lines > maxFile) problems.push({ file, line: 1, lines });
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, scriptKind(file));
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && "body" in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > maxFunction) problems.push({ file, line: first + 1, lines: last - first + 1, what: nameOf(node as ts.FunctionLikeDeclaration, source) });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return problems;
}

export function describeSizes(problems: readonly SizeProblem[]): string[] {
  return problems.map((p) =>
    p.what === undefined
      ? `too long: src/${p.file} has ${p.lines} lines (at most ${MAX_FILE_LINES}: split it by job)`
      : `too long: ${p.what} at src/${p.file}:${p.line} has ${p.lines} lines (at most ${MAX_FUNCTION_LINES})`,
  );
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const sources = readSources(SRC_DIR);
  const problems = sizeProblems(sources);
  if (problems.length > 0) {
    for (const line of describeSizes(problems)) console.error(line);
    process.exit(1);
  }
  const longest = Math.max(...[...sources.values()].map(lineCount));
  console.log(`sizes: ${sources.size} files, none over ${MAX_FILE_LINES} lines (the longest ${longest}), no function over ${MAX_FUNCTION_LINES}`);
}

