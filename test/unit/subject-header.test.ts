// The subject's route header (src/auth/subject-header.ts): compact JSON in printable ASCII whatever the script of a
// label, an email or a group, read back the same; anything else in the header is no subject at all.
import { describe, expect, it } from "vitest";
import type { Subject } from "../../src/config/subject.ts";
import { readSubjectHeader, subjectHeaderValue } from "../../src/auth/subject-header.ts";

describe("the subject header", () => {
  it("is printable ASCII JSON that reads back the same subject, in any script", () => {
    const subjects: Subject[] = [
      { kind: "token", id: "0123456789abcdef" },
      { kind: "token", id: "0123456789abcdef", label: "déploiement ✓ 開発 \"bot\"\n" },
      { kind: "member", id: "acme.AAAAAAAAAAAAAAAAAAAAAA", email: "zoë@example.com", groups: ["Équipe", "開発者", "emoji 🚀", "\u0000nul"] },
      { kind: "member", id: "acme.AAAAAAAAAAAAAAAAAAAAAA", groups: [] },
    ];
    for (const subject of subjects) {
      const value = subjectHeaderValue(subject);
      expect(value).toMatch(/^[\x20-\x7e]*$/);
      // A header holds it as it is.
      expect(new Headers({ s: value }).get("s")).toBe(value);
      expect(readSubjectHeader(value)).toEqual(subject);
    }
  });

  it("is no subject when missing, not JSON or not a subject's shape", () => {
    for (const value of [null, "", "{", "[]", "null", JSON.stringify({ kind: "admin", id: "x" }), JSON.stringify({ kind: "token", id: "" }), JSON.stringify({ kind: "member", id: "u", groups: "eng" })]) {
      expect(readSubjectHeader(value)).toBeUndefined();
    }
  });
});
