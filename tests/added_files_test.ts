/**
 * @module
 * On a copy of the project: a route and an island added between two starts work on the next
 * start with nothing else to do, and a page that fails or calls `notFound()` while rendering
 * still gets the right status, because the status is decided before the shell is sent.
 */
import assert from "node:assert/strict";
import { copyProject } from "./helpers/project_copy.ts";
import { startServer } from "./helpers/server.ts";

const GONE_ROUTE = `import { notFound } from "../lib/mod.ts";

export default function Gone(): never {
  throw notFound();
}
`;

const BROKEN_ROUTE = `export default function Broken(): never {
  throw new Error("broken before the shell");
}
`;

const ADDED_ISLAND = `import { useState } from "react";

export default function Added({ label }: { label: string }) {
  const [on, setOn] = useState(false);
  return <button type="button" onClick={() => setOn(!on)}>{label}: {on ? "on" : "off"}</button>;
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

Deno.test("files added under routes/ and islands/ work on the next start", async (t) => {
  await using project = await copyProject();
  await project.write("routes/gone.tsx", GONE_ROUTE);
  await project.write("routes/broken.tsx", BROKEN_ROUTE);

  await t.step("the status is decided before the shell", async () => {
    await using server = await startServer({}, { root: project.root });
    const gone = await server.fetch("/gone");
    assert.equal(gone.status, 404, "notFound() during render");
    assert.ok((await gone.text()).includes("<h1>Page not found</h1>"));

    const broken = await server.fetch("/broken");
    assert.equal(broken.status, 500, "an error during render, before the shell");
    assert.ok(!(await broken.text()).includes("broken before the shell"));

    const added = await server.fetch("/added");
    await added.body?.cancel();
    assert.equal(added.status, 404, "not there yet");
  });

  await project.write("islands/Added.tsx", ADDED_ISLAND);
  await project.write("routes/added.tsx", ADDED_ROUTE);

  await t.step("the next start builds and serves them", async () => {
    await using server = await startServer({}, { root: project.root });
    const res = await server.fetch("/added");
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.ok(html.includes("<title>Added</title>"));
    assert.match(html, /<button type="button">switch(<!-- -->)?: (<!-- -->)?off<\/button>/);
    const chunk = /<app-island name="Added" src="(\/_app\/Added-\w+\.js)"/.exec(html)?.[1];
    assert.ok(chunk, "the island marker names the new chunk");
    assert.ok(html.includes(`<link rel="modulepreload" href="${chunk}"/>`));
    assert.match(html, /<script src="\/_app\/boot-\w+\.js" type="module"/);

    const code = await server.fetch(chunk);
    assert.equal(code.status, 200);
    assert.match(await code.text(), /switch|useState|on/);
  });
});
