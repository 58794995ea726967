// A keyboard user's walk over a dashboard page, as the browser tests run it on every page they open (checkPage in
// dashboard-pages.ts), at each width: Tab from the top of the page until focus comes back to where it started, then
// Shift+Tab the other way. Every visible interactive element (links, buttons, form fields, summaries, anything with a
// tabindex) must be reached exactly once a cycle, in document order (so no positive tabindex reorders them), each
// one shown (not zero-sized, not outside the viewport, not covered) and drawn with a focus indicator its unfocused
// look lacks (an outline or a box-shadow); a walk that does not come back within the page's count of targets plus a
// margin is a keyboard trap. The first target must be the layout's "Skip to content" link, and Enter on it must move
// focus to <main>. The walk leaves the page as it found it: nothing focused, no fragment in the URL.
import type { Page } from "playwright-core";

/** Presses allowed beyond the page's count of targets before the walk calls it a trap (the step outside the page, and slack). */
const MARGIN = 3;

/** Where focus is after a press: its target's index (-1 outside the page, -2 an element not counted), its name, what is wrong with it. */
interface Focus {
  index: number;
  name: string;
  problems: string[];
}

/** What the walk keeps in the page between presses (an evaluated function shares no code with another). */
interface WalkState {
  targets: Element[];
  looks: string[];
  nameOf: (el: Element) => string;
  lookOf: (el: Element) => string;
}

/** Puts the sequential-focus starting point at the top of the page with nothing focused (a tabindex on <body> for a moment). */
const toTop = (page: Page) =>
  page.evaluate(() => {
    window.scrollTo(0, 0);
    document.body.tabIndex = -1;
    document.body.focus();
    document.body.removeAttribute("tabindex");
  });

/** The page's keyboard targets in document order, each one's unfocused look kept in the page; their names, and any positive tabindex. */
function findTargets(page: Page): Promise<{ names: string[]; problems: string[] }> {
  return page.evaluate(() => {
    const nameOf = (el: Element) => {
      const text = el.getAttribute("aria-label") ?? (el.textContent?.trim() || el.getAttribute("name") || "");
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} "${text.replace(/\s+/g, " ").slice(0, 40)}"`;
    };
    const lookOf = (el: Element) => {
      const s = getComputedStyle(el);
      return [s.outlineStyle, s.outlineWidth, s.outlineColor, s.boxShadow].join(" / ");
    };
    const all = Array.from(document.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]"));
    const targets = all.filter((el) => {
      const field = el as HTMLInputElement;
      if (field.type === "hidden" || field.disabled || (el as HTMLElement).tabIndex < 0 || el.closest("[inert]")) return false;
      return el.getClientRects().length > 0 && getComputedStyle(el).visibility === "visible";
    });
    const state: WalkState = { targets, looks: targets.map(lookOf), nameOf, lookOf };
    (window as unknown as { tabWalk: WalkState }).tabWalk = state;
    const positive = all.filter((el) => (el as HTMLElement).tabIndex > 0).map((el) => `${nameOf(el)} has tabindex ${(el as HTMLElement).tabIndex}: it jumps the document order`);
    return { names: targets.map(nameOf), problems: positive };
  });
}

/** The focused element: which target it is, and whether it is shown and drawn as focused. */
function focused(page: Page): Promise<Focus> {
  return page.evaluate(() => {
    const { targets, looks, nameOf, lookOf } = (window as unknown as { tabWalk: WalkState }).tabWalk;
    const el = document.activeElement;
    if (!el || el === document.body || el === document.documentElement) return { index: -1, name: "outside the page", problems: [] };
    const name = nameOf(el);
    const index = targets.indexOf(el);
    const problems: string[] = [];
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (box.width < 1 || box.height < 1) problems.push(`zero-sized (${box.width}x${box.height})`);
    if (style.visibility !== "visible" || Number(style.opacity) === 0) problems.push("invisible");
    if (box.bottom <= 0 || box.right <= 0 || box.top >= innerHeight || box.left >= innerWidth) problems.push("outside the viewport");
    else {
      const x = Math.min(Math.max(box.left + box.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(box.top + box.height / 2, 0), innerHeight - 1);
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(hit === el || el.contains(hit))) problems.push(`covered by ${hit ? hit.tagName.toLowerCase() : "nothing"}`);
    }
    const look = lookOf(el);
    const drawn = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none";
    if (index >= 0 && (!drawn || look === looks[index])) problems.push(`no visible focus indicator (${look})`);
    return { index: index >= 0 ? index : -2, name, problems };
  });
}

/** Presses `key` until focus is back on target 0 (at most `limit` presses): where focus went at each press. */
async function cycle(page: Page, key: "Tab" | "Shift+Tab", limit: number): Promise<{ steps: Focus[]; closed: boolean }> {
  const steps: Focus[] = [];
  for (let press = 0; press < limit; press++) {
    await page.keyboard.press(key);
    const at = await focused(page);
    steps.push(at);
    if (at.index === 0) return { steps, closed: true };
  }
  return { steps, closed: false };
}

/** What is wrong with one cycle: its order against the expected, the elements shown badly, a trap. */
function cycleProblems(key: string, names: string[], expected: number[], walked: { steps: Focus[]; closed: boolean }): string[] {
  const problems = walked.steps.flatMap((s) => s.problems.map((p) => `${key}: ${s.name} ${p}`));
  if (!walked.closed) {
    const seen = walked.steps.map((s) => s.name);
    return [...problems, `${key}: focus did not come back to ${names[0]} in ${walked.steps.length} presses (a keyboard trap?): ${seen.slice(-5).join(" → ")}`];
  }
  const order = walked.steps.filter((s) => s.index !== -1).map((s) => s.index);
  if (JSON.stringify(order) !== JSON.stringify(expected)) {
    const label = (i: number) => names[i] ?? walked.steps.find((s) => s.index === i)?.name ?? "an element not counted";
    problems.push(`${key}: reached ${order.map(label).join(" → ")}; expected ${expected.map(label).join(" → ")}`);
  }
  const outside = walked.steps.filter((s) => s.index === -1).length;
  if (outside > 1) problems.push(`${key}: left the page ${outside} times in one cycle`);
  const strangers = walked.steps.filter((s) => s.index === -2).map((s) => s.name);
  if (strangers.length > 0) problems.push(`${key}: focus reached elements that are not visible targets: ${strangers.join(", ")}`);
  return problems;
}

/** Enter on the skip link (target 0): focus must land on <main>, and the next Tab on the first target inside it. */
async function skipLinkProblems(page: Page, names: string[]): Promise<string[]> {
  const isSkip = await page.evaluate(() => {
    const first = (window as unknown as { tabWalk: WalkState }).tabWalk.targets[0];
    return first?.matches('a[href="#content"]') === true && first.textContent?.trim() === "Skip to content" && document.activeElement === first;
  });
  if (!isSkip) return [`the first target is ${names[0] ?? "none"}, not the "Skip to content" link`];
  await page.keyboard.press("Enter");
  const landed = await page.evaluate(() => (document.activeElement === document.querySelector("main#content") ? "main" : (document.activeElement?.tagName.toLowerCase() ?? "nothing")));
  if (landed !== "main") return [`Enter on "Skip to content" focused ${landed}, not <main>`];
  const firstInMain = await page.evaluate(() => (window as unknown as { tabWalk: WalkState }).tabWalk.targets.findIndex((el) => el.closest("main") !== null));
  if (firstInMain < 0) return [];
  await page.keyboard.press("Tab");
  const next = await focused(page);
  return next.index === firstInMain ? [] : [`Tab after "Skip to content" reached ${next.name}, not ${names[firstInMain]}`];
}

/** The problems a keyboard user meets on the page at its current width (none expected). */
export async function tabWalkProblems(page: Page): Promise<string[]> {
  await toTop(page);
  const { names, problems } = await findTargets(page);
  if (names.length === 0) return [...problems, "the page has nothing to reach with Tab"];
  const limit = names.length + MARGIN;
  await page.keyboard.press("Tab");
  const first = await focused(page);
  if (first.index !== 0) return [...problems, `the first Tab from the top reached ${first.name}, not ${names[0]}`];
  const forward = await cycle(page, "Tab", limit);
  problems.push(...first.problems.map((p) => `Tab: ${first.name} ${p}`), ...cycleProblems("Tab", names, [...names.keys()].slice(1).concat(0), forward));
  if (forward.closed) {
    const back = await cycle(page, "Shift+Tab", limit);
    problems.push(...cycleProblems("Shift+Tab", names, [...names.keys()].slice(1).reverse().concat(0), back));
    if (back.closed) problems.push(...(await skipLinkProblems(page, names)));
  }
  // As found: no fragment in the URL (the tests match URLs exactly), nothing focused.
  await page.evaluate(() => history.replaceState(history.state, "", location.pathname + location.search));
  await toTop(page);
  return problems;
}
