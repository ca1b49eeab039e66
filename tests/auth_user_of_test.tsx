/**
 * @module
 * `userOf(state)`: the signed-in user behind `requireUser()` or `requireRole()`, typed `User` with
 * no `!`. The type checks are this file's own: the lines below read `.email` and `.id` as
 * `string`, which type-checks only because `userOf` returns a `User` (`state.user` alone is
 * optional: the `@ts-expect-error` must meet its error), so `deno check` (and `deno test`) fails
 * on this file if either changes. At run time it gives the guard's user in a page, a handler, a
 * middleware and an action, and where no guard ran it answers 401 (no redirect to log in: that
 * would loop), never a failure.
 */
import assert from "node:assert/strict";
import { createDefine } from "../lib/mod.ts";
import { requireRole, requireUser, userOf, type UserState } from "../lib/auth.ts";
import { TestClient } from "../lib/testing.ts";
import { actionIdOf, memoryApp } from "./helpers/app.ts";
import { storedUser } from "./helpers/auth.tsx";

interface State extends UserState {
  greeting?: string;
}
const define = createDefine<State>();

/** Guards the lines that must not type-check: they are compiled, never run. */
const NEVER = Deno.args.includes("--never");

const ACTIONS = "routes/account/_actions.ts";

function files() {
  return {
    routes: {
      "_error.tsx": {
        default: define.errorPage(({ status, message }) => <h1>{status}: {message}</h1>),
      },
      "account/_middleware.ts": {
        handler: [
          requireUser(),
          define.middleware(async function greet(c, next) {
            const name: string = userOf(c.var).email;
            c.set("greeting", `Hello, ${name}`);
            await next();
          }),
        ],
      },
      "account/index.tsx": {
        default: define.page(({ state }) => {
          // @ts-expect-error -- state.user alone is optional: this is what userOf is for
          if (NEVER) [state.user.email] satisfies string[];
          const email: string = userOf(state).email;
          return (
            <p>
              Signed in as <b>{email}</b>. {state.greeting}
            </p>
          );
        }),
      },
      "account/data.ts": {
        handler: define.handlers({
          GET(_req, ctx) {
            const id: string = userOf(ctx.state).id;
            return Response.json({ id });
          },
        }),
      },
      "admin/_middleware.ts": { handler: requireRole("admin") },
      "admin/index.tsx": {
        default: define.page(({ state }) => <p>Admin {userOf(state).roles.join(",")}</p>),
      },
      // No guard: a page that reads userOf where nothing set the user.
      "loose.tsx": { default: define.page(({ state }) => <p>{userOf(state).email}</p>) },
    },
    actions: {
      [ACTIONS]: {
        // deno-lint-ignore require-await -- every server action is async
        async whoAmI(): Promise<string> {
          const email: string = userOf(define.context().var).email;
          return email;
        },
      },
    },
  };
}

Deno.test("userOf: the guard's user, typed, in a page, a handler, a middleware and an action", async () => {
  await using kv = await Deno.openKv(":memory:");
  const app = memoryApp(files(), { kv });
  const client = new TestClient(app);
  const ada = await storedUser(kv, "ada@example.com", { roles: ["admin"] });
  await client.signInAs(ada);

  const page = await client.request("/account");
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Signed in as <b>ada@example.com<\/b>\. <!-- -->Hello, ada@/);
  assert.deepEqual(await (await client.request("/account/data")).json(), { id: ada.id });
  assert.match(await (await client.request("/admin")).text(), /Admin <!-- -->admin/);
  const answer = await client.call<[], string>(`/_action/${actionIdOf(ACTIONS, "whoAmI")}`);
  assert.equal(answer, "ada@example.com");
});

Deno.test("userOf where no guard set the user: 401, not a failure, and no redirect to log in", async () => {
  await using kv = await Deno.openKv(":memory:");
  const app = memoryApp(files(), { kv });
  const anonymous = new TestClient(app);

  const html = await anonymous.request("/loose", { headers: { Accept: "text/html" } });
  assert.equal(html.status, 401);
  assert.match(await html.text(), /<h1>401<!-- -->: <!-- -->Sign in to continue\.<\/h1>/);
  const json = await anonymous.request("/loose", { headers: { Accept: "application/json" } });
  assert.equal(json.status, 401);
  assert.deepEqual(await json.json(), { error: { status: 401, message: "Sign in to continue." } });

  // Not the guard's redirect to the login page: no guard read the session here, so a signed-in
  // user meets it too, and the login page sends a signed-in user straight back - a loop.
  const ada = new TestClient(app);
  await ada.signInAs(await storedUser(kv, "ada@example.com"));
  const signedIn = await ada.request("/loose", { headers: { Accept: "text/html" } });
  assert.equal(signedIn.status, 401);
  await signedIn.body?.cancel();
});
