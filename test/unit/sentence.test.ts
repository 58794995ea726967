import { describe, expect, it } from "vitest";
import { firstSentenceEnd } from "../../src/catalog/sentence.ts";
import { oneLine } from "../../src/catalog/render.ts";

const first = (text: string) => {
  const end = firstSentenceEnd(text);
  return end === -1 ? text : text.slice(0, end + 1);
};

describe("firstSentenceEnd", () => {
  it("ends at a period, question or exclamation mark before a space or the end", () => {
    expect(first("Lists the files. Paginated.")).toBe("Lists the files.");
    expect(first("Is it up? Then call it.")).toBe("Is it up?");
    expect(first("Deletes it! Careful.")).toBe("Deletes it!");
    expect(first("One sentence only.")).toBe("One sentence only.");
    expect(firstSentenceEnd("No end at all")).toBe(-1);
  });

  it("carries on past abbreviations that never end a sentence", () => {
    expect(first("The field name, e.g. 'System.Title'. Required.")).toBe("The field name, e.g. 'System.Title'.");
    expect(first("The id, i.e. the number in the URL. Then more.")).toBe("The id, i.e. the number in the URL.");
    expect(first("Compare main vs. the branch. Returns a diff.")).toBe("Compare main vs. the branch.");
    expect(first("Sizes (approx. 5 MB each) are listed. More.")).toBe("Sizes (approx. 5 MB each) are listed.");
    expect(first("See the spec, cf. Fig. 3 there. More.")).toBe("See the spec, cf. Fig. 3 there.");
    expect(first("E.g. a repository. More.")).toBe("E.g. a repository.");
  });

  it("never ends inside version numbers, file names or domains", () => {
    expect(first("Reads package.json from v1.2.3 at example.com today. Next.")).toBe("Reads package.json from v1.2.3 at example.com today.");
  });

  it("carries on when the text goes on in lower case, and ends at etc. before a capital", () => {
    expect(first("Issues, pull requests, etc. from one repository. More.")).toBe("Issues, pull requests, etc. from one repository.");
    expect(first("Issues, pull requests, etc. Use a filter.")).toBe("Issues, pull requests, etc.");
    expect(first("Supported in the U.S. and elsewhere. More.")).toBe("Supported in the U.S. and elsewhere.");
  });
});

describe("oneLine keeps what follows an abbreviation", () => {
  it("does not cut a catalog line at e.g.", () => {
    expect(oneLine("Query work items by a field, e.g. System.State. Returns ids.")).toBe("Query work items by a field, e.g. System.State");
  });
});
