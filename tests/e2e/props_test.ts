/**
 * @module
 * Island props arrive in the browser with their types: an island added to a copy of the project
 * inspects its props after hydration (in an effect, which only runs in the browser) and shows
 * what it found. Hostile strings arrive intact too, under the real CSP.
 */
import assert from "node:assert/strict";
import { launchBrowser, pageErrors } from "../helpers/browser.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

const HOSTILE = [
  "</script><script>window.__pwned = 1</script>",
  "<!--",
  `"'&<>`,
  "\u2028\u2029",
  "</app-island>",
];

const PROBE_ISLAND = `import { useEffect, useState } from "react";

/** Shows, once hydrated, what its props are in the browser. */
export default function Probe(props: Record<string, any>) {
  const [report, setReport] = useState("");
  useEffect(() => {
    const { since, tags, scores, big, home, node, strings } = props;
    setReport(JSON.stringify({
      since: since instanceof Date && since.toISOString(),
      tags: tags instanceof Set && [...tags],
      scores: scores instanceof Map && [...scores].map(([k, v]) => [k, typeof v, String(v)]),
      big: typeof big === "bigint" && String(big),
      home: home instanceof URL && home.pathname,
      missing: "missing" in props && props.missing === undefined,
      cycle: node.self === node,
      strings,
    }));
  }, []);
  return <pre id="report">{report}</pre>;
}
`;

const PROBE_ROUTE = `import Probe from "../islands/Probe.tsx";

const node: Record<string, unknown> = { name: "node" };
node.self = node;

export default function ProbePage() {
  return (
    <Probe
      since={new Date("2026-01-01T00:00:00Z")}
      tags={new Set(["react", "deno"])}
      scores={new Map([["ada", 10n ** 20n]])}
      big={2n ** 64n}
      home={new URL("https://example.test/home")}
      missing={undefined}
      node={node}
      strings={${JSON.stringify(HOSTILE)}}
    />
  );
}
`;

Deno.test("island props arrive typed in the browser", async () => {
  await using project = await copyProject();
  await project.write("islands/Probe.tsx", PROBE_ISLAND);
  await project.write("routes/probe.tsx", PROBE_ROUTE);
  await using server = await startServer({}, { root: project.root });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  const errors = pageErrors(page);

  await page.goto(server.origin + "/probe");
  await page.waitForFunction(() => document.getElementById("report")?.textContent !== "");
  const report = JSON.parse((await page.locator("#report").textContent())!);

  assert.deepEqual(report, {
    since: "2026-01-01T00:00:00.000Z",
    tags: ["react", "deno"],
    scores: [["ada", "bigint", "100000000000000000000"]],
    big: "18446744073709551616",
    home: "/home",
    missing: true,
    cycle: true,
    strings: HOSTILE,
  });
  assert.equal(await page.evaluate(() => "__pwned" in window), false);
  assert.deepEqual(errors, []);
});
