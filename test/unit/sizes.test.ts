// The size check (scripts/check-sizes.ts): files and functions over the limits found in made-up sources, none in src/.
import { describe, expect, it } from "vitest";
import { SRC_DIR, readSources } from "../../scripts/check-layers.ts";
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, describeSizes, sizeProblems } from "../../scripts/check-sizes.ts";

const lines = (n: number, text = "const x = 1;") => Array.from({ length: n }, () => text).join("\n") + "\n";
const fn = (name: string, bodyLines: number) => `function ${name}() {\n${lines(bodyLines, "  work();")}}\n`;

describe("sizeProblems", () => {
  it("passes a file and functions at the limits", () => {
    const body = MAX_FUNCTION_LINES - 2;
    const source = fn("fits", body) + lines(MAX_FILE_LINES - body - 2);
    expect(sizeProblems(new Map([["ok.ts", source]]))).toEqual([]);
  });

  it("names a file one line over, and a function one line over with where it starts", () => {
    const tooLong = lines(MAX_FILE_LINES + 1);
    const source = "// a comment\n" + fn("long", MAX_FUNCTION_LINES - 1);
    const problems = sizeProblems(new Map([["big.ts", tooLong], ["fn.ts", source]]));
    expect(problems).toEqual([
      { file: "big.ts", line: 1, lines: MAX_FILE_LINES + 1 },
      { file: "fn.ts", line: 2, lines: MAX_FUNCTION_LINES + 1, what: "long" },
    ]);
    expect(describeSizes(problems)[1]).toBe(`too long: long at src/fn.ts:2 has ${MAX_FUNCTION_LINES + 1} lines (at most ${MAX_FUNCTION_LINES})`);
  });

  it("counts a closure on its own and inside the function around it, and names arrows by their binding", () => {
    const inner = `  const handler = () => {\n${lines(MAX_FUNCTION_LINES, "    step();")}  };\n`;
    const source = `export function outer() {\n${inner}}\n`;
    const found = sizeProblems(new Map([["closure.ts", source]])).map((p) => p.what);
    expect(found).toEqual(["outer", "handler"]);
  });
});

describe("src/", () => {
  it("has no file or function over the limits", () => {
    expect(describeSizes(sizeProblems(readSources(SRC_DIR)))).toEqual([]);
  });
});
