/**
 * @module
 * axe-core (npm `axe-core`) on a page in Chromium: `axeViolations(page)` injects the engine through
 * the DevTools protocol (so the page's CSP, which allows only its own nonce'd scripts, does not
 * stand in the way) and runs every rule of WCAG 2.2 A and AA and axe's best practices on the page as
 * it is, each violation as its rule, impact and the nodes that break it.
 */
import axe from "axe-core";
import type { Page } from "playwright-core";

export interface Violation {
  id: string;
  impact: string | null;
  help: string;
  /** CSS selectors of the offending nodes. */
  nodes: string[];
}

/** Every rule, or all but `skip` (rule ids). */
export async function axeViolations(page: Page, skip: string[] = []): Promise<Violation[]> {
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axe.source);
  return await page.evaluate(async (skip) => {
    const rules = Object.fromEntries(skip.map((id) => [id, { enabled: false }]));
    // deno-lint-ignore no-explicit-any -- the engine the line above put on the page
    const { violations } = await (globalThis as any).axe.run(document, {
      resultTypes: ["violations"],
      rules,
    });
    // deno-lint-ignore no-explicit-any
    return violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      // deno-lint-ignore no-explicit-any
      nodes: v.nodes.map((n: any) => n.target.join(" ")),
    }));
  }, skip);
}

/** Fails with every violation spelled out, for the test's message. */
export function describeViolations(where: string, violations: Violation[]): string {
  return `${where}: ${violations.length} axe violation(s)\n` +
    violations.map((v) => `- ${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.join("\n    ")}`).join(
      "\n",
    );
}
