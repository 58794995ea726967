// What a person is shown when a program's call needs their consent (src/views/consent-question.ts): the arguments whole while
// they fit, else every key with its long values shortened, so that padding cannot push what matters out of view.
import { describe, expect, it } from "vitest";
import { consentPreview } from "../../src/views/consent-question.ts";

describe("consentPreview", () => {
  it("shows arguments that fit whole", () => {
    const args = JSON.stringify({ entityNames: ["a", "b"] });
    expect(consentPreview(args)).toBe(args);
    expect(consentPreview("x".repeat(1500))).toBe("x".repeat(1500));
  });

  it("keeps every key in view when a long value pads the arguments, saying what was shortened", () => {
    const args = JSON.stringify({ note: "x".repeat(5000), entityNames: ["all"] });
    const shown = consentPreview(args);
    expect(shown).toContain('"entityNames":["all"]');
    expect(shown).toContain(`"note":"${"x".repeat(120)}… (5000 characters)"`);
    expect(shown).toMatch(/ \(long values shortened; 5033 characters in all\)$/);
    expect(shown.length).toBeLessThan(1600);
  });

  it("shortens long arrays and deep values, and says so when even that does not fit", () => {
    const list = JSON.stringify({ ids: Array.from({ length: 500 }, (_, i) => i), target: "prod" });
    expect(consentPreview(list)).toContain('"… and 480 more items"],"target":"prod"}');
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`key${i}`, "v".repeat(30)])));
    const shown = consentPreview(wide, 300);
    expect(shown).toMatch(/… \(too long to show whole: \d+ characters; only the start is shown\)$/);
    expect(shown.startsWith('{"key0":')).toBe(true);
    // Not JSON (it always is from the sandbox, but the preview must not throw): cut and said.
    expect(consentPreview("{".repeat(2000))).toMatch(/too long to show whole: 2000 characters/);
  });
});
