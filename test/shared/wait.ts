// Polling for a condition, shared by the workerd and the Node test projects (plain TypeScript, no runtime imports).

/**
 * Polls `check` (at most `tries` times, `ms` apart) until it holds; says whether it did. Callers assert the
 * answer, so a condition that never comes fails the test rather than letting it carry on.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, { tries = 100, ms = 20 }: { tries?: number; ms?: number } = {}): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, ms));
  }
  return check();
}
