/**
 * @module
 * Building beside a running server never breaks it. On a project copy, a production server
 * (`lib/cli/start.ts`, what `deno task start` runs) and a development one (the same with
 * `NODE_ENV=development`, building into `_build/dev/`) keep answering 200 for every island chunk
 * and asset their pages reference while, after an island was edited, `deno task build`, a
 * development build and `deno task check` run in the copy: production builds go to `_build/`,
 * development ones to `_build/dev/`, and each keeps the assets of its last 3 builds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { builtFixture } from "../helpers/built_copy.ts";
import { copyProject } from "../helpers/project_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const PAGES = ["/", "/counter", "/wall", "/streaming", "/about"];

/**
 * Every asset the server's pages name, with the chunks each chunk imports (statically or when
 * first needed), transitively: what a browser holding these pages may still ask for.
 */
async function assetsOf(server: TestServer): Promise<Set<string>> {
  const urls = new Set<string>();
  const add = async (url: string): Promise<void> => {
    if (urls.has(url)) return;
    urls.add(url);
    if (!url.endsWith(".js")) return;
    const code = await (await server.fetch(url)).text();
    const imported = code.matchAll(/["'](?:\.\/|\/_app\/)([\w.-]+\.js)["']/g);
    await Promise.all([...imported].map(([, file]) => add(`/_app/${file}`)));
    const map = /\/\/# sourceMappingURL=([\w.-]+\.map)/.exec(code)?.[1];
    if (map) urls.add(`/_app/${map}`);
  };
  await Promise.all(PAGES.map(async (page) => {
    const html = await (await server.fetch(page)).text();
    const named = html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css|svg))"/g);
    await Promise.all([...named].map(([, url]) => add(url)));
  }));
  return urls;
}

/** The URLs of `urls` that `server` no longer answers with 200. */
async function missing(server: TestServer, urls: Set<string>): Promise<string[]> {
  const statuses = await Promise.all([...urls].map(async (url) => {
    const res = await server.fetch(url);
    await res.body?.cancel();
    return res.status === 200 ? [] : [`${url} → ${res.status}`];
  }));
  return statuses.flat();
}

/** Runs deno in `root`: the exit code and all it printed. */
async function run(root: string, args: string[], env: Record<string, string> = {}) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code, output: text(stdout) + text(stderr) };
}

Deno.test("builds beside running servers leave every asset they serve in place", async () => {
  // The same folder run after run: `deno task check` type-checks only what changed there.
  await using copy = await copyProject({
    from: await builtFixture(),
    withBuild: true,
    reuse: "builds-beside",
  });
  await using servers = new AsyncDisposableStack();
  const served = await Promise.all((["production", "development"] as const).map(async (name) => {
    const server = servers.use(await startServer({ NODE_ENV: name }, { root: copy.root }));
    return { name, server, urls: await assetsOf(server) };
  }));
  for (const { name, urls } of served) {
    const chunks = [...urls].filter((url) => /^\/_app\/Counter-\w+\.js$/.test(url));
    assert.equal(chunks.length, 1, `${name}: its pages name the Counter island's chunk`);
  }

  // A developer's edit: every later build writes a Counter chunk of another name.
  const island = join(copy.root, "islands/Counter.tsx");
  const source = await Deno.readTextFile(island);
  const edited = source.replace("A stateful island", "A stateful island, edited");
  assert.notEqual(edited, source);
  await Deno.writeTextFile(island, edited);

  // A copy has no tests/ or bench/ of the project's; `deno task check` checks the folders all the
  // same.
  await copy.write("tests/nothing_test.ts", "export {};\n");
  await copy.write("bench/nothing.ts", "export {};\n");
  const commands: [string, string[], Record<string, string>?][] = [
    ["deno task build", ["task", "build"]],
    ["a dev build", ["run", "-A", "lib/cli/build.ts"], { NODE_ENV: "development" }],
    ["deno task check", ["task", "check"]],
  ];
  for (const [what, args, env] of commands) {
    const { code, output } = await run(copy.root, args, env);
    assert.equal(code, 0, `${what}:\n${output}`);
  }

  const history = async (dir: string) =>
    JSON.parse(await Deno.readTextFile(join(copy.root, dir, "builds.json"))) as string[][];
  for (const { name, server, urls } of served) {
    assert.deepEqual(await missing(server, urls), [], `${name} lost assets it serves`);
  }
  // The edit took: each build wrote a Counter chunk of another name beside the one served.
  for (const [dir, { name, urls }] of [["_build", served[0]], ["_build/dev", served[1]]] as const) {
    const counter = (await history(dir))[0].find((file) => /^Counter-\w+\.js$/.test(file));
    assert.ok(counter && !urls.has(`/_app/${counter}`), `${name}: a new Counter chunk`);
  }
});
