/**
 * @module
 * On a copy of the framework's test app that starts with its build: a route and an island added
 * since that build work on the next `lib/cli/start.ts` with nothing else to do — the start sees the
 * sources changed, builds, and serves the new page with the new island's own chunk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fixtureApp } from "../helpers/app.ts";
import { builtFixture } from "../helpers/built_copy.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer } from "../helpers/server.ts";

/** Text only this island's code holds: its chunk must carry it. */
const MARKER = "added since the last build";

const ADDED_ISLAND = `import { useState } from "react";

export default function Added({ label }: { label: string }) {
  const [on, setOn] = useState(false);
  return (
    <button type="button" title="${MARKER}" onClick={() => setOn(!on)}>
      {label}: {on ? "on" : "off"}
    </button>
  );
}
`;

const ADDED_ROUTE = `import Added from "../islands/Added.tsx";

export default function AddedPage() {
  return (
    <>
      <title>Added</title>
      <Added label="switch" />
    </>
  );
}
`;

Deno.test("files added under routes/ and islands/ work on the next start", async () => {
  // What the copy starts from: the test app's build, which has no such page.
  const before = await (await fixtureApp()).request("/added");
  await before.body?.cancel();
  assert.equal(before.status, 404, "not there yet");

  await using project = await copyProject({ from: await builtFixture(), withBuild: true });
  await project.write("islands/Added.tsx", ADDED_ISLAND);
  await project.write("routes/added.tsx", ADDED_ROUTE);
  await using server = await startServer({}, { root: project.root });

  const res = await server.fetch("/added");
  const html = await res.text();
  assert.equal(res.status, 200);
  assert.ok(html.includes("<title>Added</title>"));
  assert.match(
    html,
    /<button type="button" title="[^"]+">switch(<!-- -->)?: (<!-- -->)?off<\/button>/,
  );
  const chunk = /<app-island name="Added" src="(\/_app\/(Added-\w+\.js))"/.exec(html);
  assert.ok(chunk, "the island marker names the new chunk");
  assert.ok(html.includes(`<link rel="modulepreload" href="${chunk[1]}"/>`));
  assert.match(html, /<script src="\/_app\/boot-\w+\.js" type="module"/);

  const code = await server.fetch(chunk[1]);
  assert.equal(code.status, 200);
  assert.ok((await code.text()).includes(MARKER), "the chunk holds the new island's code");
  const map = await Deno.readTextFile(join(project.root, "_build/static", `${chunk[2]}.map`));
  assert.ok(JSON.parse(map).sources.some((s: string) => s.endsWith("islands/Added.tsx")));
});
