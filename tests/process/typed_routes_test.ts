/**
 * @module
 * Typed routes are checked by `deno check`, on a project copy built as `deno task build` does and
 * checked once: `params.nope` in a `defineRoute` module, a page expecting other data than its
 * handlers render, `ctx.render()` without the data they render, and a module typed for another
 * file (the manifest's check) are each an error at the right place — and nothing else is. A
 * correct typed route and docs/actions.md's server action used with `useActionState` (an action that
 * returns its state and `redirect()`s on success, `never`) check clean.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";

/** Each file that must fail, and what its error says. */
const MUST_FAIL: Record<string, { source: string; error: RegExp }> = {
  "routes/blog/[slug].tsx": {
    source: `import { defineRoute, notFound } from "../../lib/mod.ts";

interface Post {
  title: string;
}

const route = defineRoute("blog/[slug].tsx");

export const handler = route.handlers<Post>({
  GET(_req, ctx) {
    if (ctx.params.nope) throw notFound();
    return ctx.render({ title: ctx.params.slug });
  },
});

export default route.page<typeof handler>(({ data }) => <h1>{data.title}</h1>);
`,
    error: /Property 'nope' does not exist on type/,
  },
  "routes/typed/mismatch.tsx": {
    source: `import { defineRoute, type PageProps } from "../../lib/mod.ts";

const route = defineRoute("typed/mismatch.tsx");

export const handler = route.handlers<{ title: string }>({
  GET: (_req, ctx) => ctx.render({ title: "a title" }),
});

export default route.page<typeof handler>(
  ({ data }: PageProps<{ count: number }>) => <p>{data.count}</p>,
);
`,
    error: /Argument of type .* is not assignable to parameter of type/s,
  },
  "routes/typed/no_data.tsx": {
    source: `import { defineRoute } from "../../lib/mod.ts";

const route = defineRoute("typed/no_data.tsx");

export const handler = route.handlers<{ title: string }>({
  GET: (_req, ctx) => ctx.render(),
});

export default route.page<typeof handler>(({ data }) => <h1>{data.title}</h1>);
`,
    error: /Expected 1-2 arguments, but got 0/,
  },
  // Typed for another file: only the manifest, which names each module's own file, can tell.
  "_build/manifest.gen.ts": {
    source: "",
    error:
      /"routes\/typed\/elsewhere\.tsx is typed for another file: defineRoute\(\\"other\.tsx\\"\)"/,
  },
};

/** Files that must check clean. */
const MUST_PASS: Record<string, string> = {
  "routes/typed/elsewhere.tsx": `import { defineRoute } from "../../lib/mod.ts";

export default defineRoute("other.tsx").page(() => <p>Typed for a file it is not</p>);
`,
  "routes/typed/[id].tsx": `import { defineRoute, notFound } from "../../lib/mod.ts";

interface Item {
  id: string;
  count: number;
}

const route = defineRoute("typed/[id].tsx");

export const handler = route.handlers<Item>({
  GET(_req, ctx) {
    if (ctx.params.id === "none") throw notFound();
    return ctx.render({ id: ctx.params.id, count: 1 }, { status: 200 });
  },
});

export default route.page<typeof handler>(({ data, params }) => (
  <p>{data.id === params.id ? data.count.toFixed(0) : "?"}</p>
));
`,
  // docs/actions.md's example, as a form's `useActionState` uses it.
  "routes/_signup/actions.ts": `"use server";
import * as v from "valibot";
import { redirect } from "../../lib/mod.ts";

const Signup = v.object({ email: v.pipe(v.string(), v.email("Not an email address.")) });
export type State = { errors?: Partial<Record<"email", string[]>> };

export async function signUp(_previous: State, form: FormData): Promise<State> {
  const parsed = await v.safeParseAsync(Signup, Object.fromEntries(form));
  if (!parsed.success) return { errors: v.flatten<typeof Signup>(parsed.issues).nested };
  redirect("/welcome");
}
`,
  "islands/SignUp.tsx": `import { useActionState } from "react";
import { signUp, type State } from "../routes/_signup/actions.ts";

export default function SignUp() {
  const [state, action, pending] = useActionState(signUp, {} as State);
  return (
    <form action={action}>
      <input name="email" type="email" />
      {state.errors?.email && <p>{state.errors.email[0]}</p>}
      <button type="submit" disabled={pending}>Sign up</button>
    </form>
  );
}
`,
  "routes/signup.tsx": `import SignUp from "../islands/SignUp.tsx";

export default function SignUpPage() {
  return <SignUp />;
}
`,
};

interface CheckError {
  message: string;
  /** The file it is in, from the project root. */
  file: string;
}

/**
 * `deno check`'s errors, each with the file it points at. (TS6xxx blocks are notes on the error
 * before them — "Arguments for the rest parameter … were not provided" — not errors of their own.)
 */
function errorsOf(output: string, root: string): CheckError[] {
  const blocks = output.split(/\n(?=TS\d+ \[ERROR\]: )/).slice(1);
  return blocks.filter((block) => !/^TS6\d{3} /.test(block)).map((block) => {
    const at = /\n\s+at file:\/\/(.+?):\d+:\d+/.exec(block)?.[1] ?? "";
    return { message: block.split("\n    at ")[0], file: at.slice(root.length + 1) };
  });
}

Deno.test("typed routes: each mistake is a deno check error, and correct code checks", async () => {
  // Built as `deno task build` builds (a build does not type-check), once per set of sources.
  const root = await builtCopy("typed-routes", {
    ...Object.fromEntries(
      Object.entries(MUST_FAIL).flatMap(([file, { source }]) => source ? [[file, source]] : []),
    ),
    ...MUST_PASS,
  });
  const run = async (args: string[]) => {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: root,
      env: { NO_COLOR: "1", NODE_ENV: "production" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code, output: new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr) };
  };
  // main.ts imports the manifest (which `deno.json` keeps from checking on its own), and it
  // every route and island module.
  const checked = await run(["check", "main.ts"]);
  assert.notEqual(checked.code, 0, "the mistakes fail the check");
  const errors = errorsOf(checked.output, await Deno.realPath(root));
  assert.ok(errors.length > 0, checked.output);

  for (const [file, { error }] of Object.entries(MUST_FAIL)) {
    const found = errors.filter((e) => e.file === file);
    assert.ok(found.some((e) => error.test(e.message)), `${file}: ${error} in\n${checked.output}`);
  }
  const elsewhere = errors.filter((e) => !(e.file in MUST_FAIL));
  assert.deepEqual(elsewhere, [], "errors only where the mistakes are");
});
