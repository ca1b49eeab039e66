/**
 * @module
 * Server actions at build time and on the wire: the `"use server"` directive, stable opaque ids,
 * what the build accepts as an action and refuses, how a registered action renders as a form,
 * the call's encoding, and the stub that takes an action module's place in the browser — whose
 * code, strings and imports never reach a chunk.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { parse } from "devalue";
import { registerActions } from "../../lib/actions/registry.ts";
import { decodeCall } from "../../lib/actions/decode.ts";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { actionId, isServerModule, scanActions } from "../../lib/build/actions.ts";
import { actionStubs, stubSource } from "../../lib/build/action_stubs.ts";
import { fixtureBuild } from "../helpers/app.ts";
import { copyProject, FIXTURE_ROOT } from "../helpers/project_copy.ts";

Deno.test("the directive must be the module's first statement", () => {
  assert.ok(isServerModule(`"use server";\nexport async function a() {}`));
  assert.ok(isServerModule(`// note\n/** doc */\n'use server'\nexport {}`));
  assert.ok(!isServerModule(`import x from "y";\n"use server";`));
  assert.ok(!isServerModule(`const s = "use server";`));
  assert.ok(!isServerModule(`"use client";`));
});

Deno.test("action ids are keyed with the salt, never with the source", () => {
  const salt = "a-salt-of-the-project-1234";
  const id = actionId("routes/_guestbook/actions.ts", "sign", salt);
  assert.equal(id, actionId("routes/_guestbook/actions.ts", "sign", salt));
  assert.match(id, /^[\w-]{20}$/);
  assert.doesNotMatch(id, /guestbook|actions|sign|routes/i);
  assert.notEqual(id, actionId("routes/_guestbook/actions.ts", "other", salt));
  assert.notEqual(id, actionId("routes/_guestbook/other.ts", "sign", salt));
  assert.notEqual(id, actionId("routes/_guestbook/actions.ts", "sign", `${salt}2`));
});

Deno.test("an edited action module keeps its ids; the salt is made once, then kept", async () => {
  await using dir = await tempProject({
    "routes/_notes/actions.ts": `"use server";\nexport async function save() { return 1; }`,
  });
  try {
    const [before] = await scanActions(dir.root);
    const salt = await Deno.readTextFile(join(dir.root, "actions.salt"));
    assert.match(salt, /^[\w-]{32}\n$/);
    await dir.write(
      "routes/_notes/actions.ts",
      `"use server";\n// edited\nexport async function save() { return 2; }\nexport async function load() {}`,
    );
    const [after] = await scanActions(dir.root);
    assert.equal(after.exports.find((e) => e.name === "save")?.id, before.exports[0].id);
    assert.equal(await Deno.readTextFile(join(dir.root, "actions.salt")), salt);
    assert.equal(
      before.exports[0].id,
      actionId("routes/_notes/actions.ts", "save", salt.trim()),
      "keyed with the file's salt",
    );

    // A salt too short to keep anything secret stops the build, naming the file.
    await dir.write("actions.salt", "short\n");
    await assert.rejects(scanActions(dir.root), /^BuildProblem: actions\.salt: expected one word/);
  } finally {
    await esbuild.stop();
  }
});

Deno.test("the build finds the app's actions, with the same ids every time", async () => {
  try {
    const first = await scanActions(FIXTURE_ROOT);
    const second = await scanActions(FIXTURE_ROOT);
    assert.deepEqual(first, second);
    const wall = first.find((m) => m.file === "routes/_wall/actions.ts");
    assert.deepEqual(wall?.exports.map((e) => e.name), ["post"]);
  } finally {
    await esbuild.stop();
  }
});

Deno.test("an action module may export async functions in any form", async () => {
  await using dir = await tempProject({
    "lib/ok.ts": `"use server";
      export async function plain(a: string): Promise<string> { return a; }
      export const arrow = async (n: number) => n;
      export const expression = async function () {};
      async function local() {}
      export { local as renamed };
      export default async function () {}
      export type Hidden = string;`,
    "lib/not_an_action.ts": `export const value = 1;`,
  });
  try {
    const [module] = await scanActions(dir.root);
    assert.equal(module.file, "lib/ok.ts");
    assert.deepEqual(
      module.exports.map((e) => e.name).sort(),
      ["arrow", "default", "expression", "plain", "renamed"],
    );
  } finally {
    await esbuild.stop();
  }
});

Deno.test("anything but an async function is refused, naming file and export", async () => {
  const refused = {
    "value": `export const value = 3;`,
    "sync": `export function sync() {}`,
    "syncArrow": `export const syncArrow = () => 1;`,
    "gen": `export async function* gen() {}`,
    "Klass": `export class Klass {}`,
    "again": `export { again } from "./elsewhere.ts";`,
  };
  try {
    for (const [name, code] of Object.entries(refused)) {
      await using dir = await tempProject({ "routes/_x/bad.ts": `"use server";\n${code}` });
      await assert.rejects(
        scanActions(dir.root),
        new RegExp(`^BuildProblem: routes/_x/bad\\.ts: export "${name}" of a "use server" module`),
        name,
      );
    }
  } finally {
    await esbuild.stop();
  }
});

Deno.test("registered actions render as forms that post to them", () => {
  const sign = (_previous: unknown, form: FormData) => Promise.resolve(form.get("name"));
  const registry = registerActions([
    { id: "ID1", name: "sign", file: "routes/_x/actions.ts", action: sign, middlewares: [] },
  ]);
  assert.equal(registry.get("ID1")?.action, sign);
  const action = sign as typeof sign & {
    $$FORM_ACTION(prefix: string): { name: string; action: string; data: FormData | null };
    $$IS_SIGNATURE_EQUAL(id: string, bound: number): boolean;
  };
  const { data, ...form } = action.$$FORM_ACTION("R1");
  assert.deepEqual(form, {
    name: "$ACTION_REF_R1",
    action: "/_action/ID1",
    method: "POST",
    encType: "multipart/form-data",
  });
  // A submission key, new at each render (`lib/actions/once.ts`), and nothing else.
  assert.deepEqual([...data!.keys()], ["$ACTION_ONCE"]);
  assert.match(String(data!.get("$ACTION_ONCE")), /^[0-9a-f-]{36}$/);
  assert.notEqual(action.$$FORM_ACTION("R1").data!.get("$ACTION_ONCE"), data!.get("$ACTION_ONCE"));
  assert.ok(action.$$IS_SIGNATURE_EQUAL("ID1", 0));
  assert.ok(!action.$$IS_SIGNATURE_EQUAL("ID2", 0));

  // React's useActionState binds the previous state: it travels in a hidden field.
  const bound = action.bind(null, { count: 1n }) as unknown as typeof action;
  const fields = bound.$$FORM_ACTION("R2");
  assert.equal(fields.action, "/_action/ID1");
  assert.deepEqual(parse(fields.data!.get("$ACTION_R2:bound") as string), [{ count: 1n }]);
  assert.ok(bound.$$IS_SIGNATURE_EQUAL("ID1", 1));

  assert.throws(
    () =>
      registerActions([
        { id: "x", name: "nope", file: "lib/x.ts", action: 1 as never, middlewares: [] },
      ]),
    /lib\/x\.ts: export nope is not a function/,
  );
});

Deno.test("call arguments keep their types and files", async () => {
  const form = new FormData();
  form.set("title", "hi");
  form.set("upload", new File(["bytes"], "a.txt"));
  form.set("$ACTION_REF_1", "");
  const body = encodeCall([new Date(0), new Map([["k", 2n ** 64n]]), undefined, form]);
  // A real multipart body, parsed back as the server does.
  const received = await new Response(body).formData();
  const [date, map, missing, back] = decodeCall(received) as [
    Date,
    Map<string, bigint>,
    undefined,
    FormData,
  ];
  assert.deepEqual(date, new Date(0));
  assert.deepEqual(map, new Map([["k", 2n ** 64n]]));
  assert.equal(missing, undefined);
  assert.deepEqual([...back.keys()], ["title", "upload"]);
  const file = back.get("upload") as File;
  assert.equal(file.name, "a.txt");
  assert.equal(await file.text(), "bytes");
});

Deno.test("undecodable calls are refused", () => {
  const body = (args: string) => {
    const form = new FormData();
    form.set("$ACTION_ARGS", args);
    return form;
  };
  assert.throws(() => decodeCall(new FormData()));
  assert.throws(() => decodeCall(body("{")));
  assert.throws(() => decodeCall(body(`[{"a":1},1]`)));
  assert.throws(() => decodeCall(body(`[[1],["Blob",2],"$ACTION_FILE_0"]`)));
  assert.throws(() => decodeCall(body(`[[1],["FormData",2],[3],[4,5],"k",{}]`)));
});

Deno.test("the browser gets a stub in place of an action module", async () => {
  const module = {
    file: "routes/_x/actions.ts",
    exports: [{ name: "sign", id: "ID_SIGN" }, { name: "default", id: "ID_DEFAULT" }],
  };
  const source = stubSource(module);
  assert.equal(
    source,
    `import { serverAction } from "./actions.ts";\n` +
      `export const sign = /* @__PURE__ */ serverAction("ID_SIGN", "sign");\n` +
      `export default /* @__PURE__ */ serverAction("ID_DEFAULT", "default");\n`,
  );

  await using dir = await tempProject({
    "routes/_x/actions.ts": `"use server";\nconst MARKER = "server-only-marker";\n` +
      `export async function sign() { return MARKER; }\n` +
      `export default async function () {}`,
    "islands/Form.tsx": `import { sign } from "../routes/_x/actions.ts";\nconsole.log(sign);`,
    "lib/client/actions.ts": `export const serverAction = (id: string) => id;`,
  });
  try {
    const result = await esbuild.build({
      absWorkingDir: dir.root,
      entryPoints: ["islands/Form.tsx"],
      bundle: true,
      write: false,
      format: "esm",
      plugins: [actionStubs(dir.root, [module])],
    });
    const [out] = result.outputFiles;
    assert.match(out.text, /ID_SIGN/);
    assert.doesNotMatch(out.text, /server-only-marker|ID_DEFAULT|routes\/_x/);
  } finally {
    await esbuild.stop();
  }
});

Deno.test("the build keeps action modules out of the browser and routes, and refuses bad ones", async () => {
  await using copy = await copyProject();
  const build = async () => {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "lib/cli/build.ts"],
      cwd: copy.root,
      env: { NODE_ENV: "production" },
      stderr: "piped",
      stdout: "null",
    }).output();
    return { code, stderr: new TextDecoder().decode(stderr) };
  };
  await copy.write(
    "routes/subscribe.ts",
    `"use server";\nexport async function subscribe(form: FormData) { return form; }\n`,
  );
  assert.equal((await build()).code, 0);

  const server = await Deno.readTextFile(join(copy.root, "routes/_wall/actions.ts"));
  const literals = [...server.matchAll(/"([^"\n]{12,})"/g)].map(([, text]) => text);
  assert.ok(literals.includes("3 characters at least."));
  const manifest = await Deno.readTextFile(join(copy.root, "_build/manifest.gen.ts"));
  const [, postId] = manifest.match(/\{ id: "([^"]+)", name: "post"/)!;
  // A "use server" module under routes/ holds actions and is no route.
  assert.match(manifest, /name: "subscribe", file: "routes\/subscribe\.ts"/);
  assert.doesNotMatch(manifest, /pattern: "\/subscribe"/);
  let chunks = "";
  const sources = new Set<string>();
  for await (const entry of Deno.readDir(join(copy.root, "_build/static"))) {
    const path = join(copy.root, "_build/static", entry.name);
    if (entry.name.endsWith(".js")) chunks += await Deno.readTextFile(path);
    if (entry.name.endsWith(".js.map")) {
      for (const source of JSON.parse(await Deno.readTextFile(path)).sources) sources.add(source);
    }
  }
  assert.ok(chunks.includes(postId), "the stub calls the action by its id");
  for (const literal of literals) {
    assert.ok(!chunks.includes(literal), `${literal} reached the browser`);
  }
  // Nor any module of the action's own (a minifier renames functions: the maps name the files).
  // An npm package the island imports itself (valibot) is the island's, and welcome.
  assert.ok([...sources].some((source) => source.endsWith("lib/client/actions.ts")));
  assert.ok([...sources].some((source) => /\/valibot@/.test(source)), "the island's own package");
  const leaked = [...sources].filter((source) =>
    /routes\/(_wall\/(actions|posts)|subscribe)\.ts/.test(source)
  );
  assert.deepEqual(leaked, [], "server modules in the browser's source maps");

  await copy.write("lib/bad_actions.ts", `"use server";\nexport const answer = 42;\n`);
  const failed = await build();
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /lib\/bad_actions\.ts: export "answer" of a "use server" module/);
});

async function tempProject(files: Record<string, string>) {
  const root = await Deno.makeTempDir({ prefix: "actions-" });
  for (const [path, contents] of Object.entries(files)) {
    await Deno.mkdir(join(root, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, path), contents);
  }
  return {
    root,
    write: (path: string, contents: string) => Deno.writeTextFile(join(root, path), contents),
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

Deno.test("the build's action ids say nothing about their files", async () => {
  const { root } = await fixtureBuild();
  const manifest = await Deno.readTextFile(join(root, "_build/manifest.gen.ts"));
  const ids = [...manifest.matchAll(/\{ id: "([^"]+)", name: "([^"]+)"/g)];
  assert.deepEqual(ids.map(([, , name]) => name).sort(), ["post", "whoAmI"]);
  for (const [, id] of ids) {
    assert.match(id, /^[\w-]{20}$/);
    assert.doesNotMatch(id, /wall|post|admin|routes|actions/i);
  }
});
