/**
 * @module
 * A small app of the tests' own for `shell/auth` (`authFiles`: modules in memory for `memoryApp`):
 * a page and an API route guarded by `requireUser()`, an admin page behind `requireRole("admin")`,
 * an open page that never asks who is signed in, an `_error.tsx`, and server actions that sign up,
 * in and out. Beside it, a call to an action that keeps its whole answer, through the test kit's
 * `TestClient` (its cookie jar). And `storedUser`: a user in the store for tests whose subject is
 * not the password, to sign in with the kit's `signInAs`.
 */
import { parse } from "devalue";
import { createDefine, requestContext } from "../../lib/mod.ts";
import {
  currentUser,
  requireRole,
  requireUser,
  signIn,
  signOut,
  signOutEverywhere,
  signUp,
  type UserState,
} from "../../lib/auth.ts";
import { normalizeEmail } from "../../lib/auth/credentials.ts";
import { hashPassword } from "../../lib/auth/password.ts";
import { insertUser, publicUser, type User } from "../../lib/auth/users.ts";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import type { TestClient } from "../../lib/testing.ts";
import { actionIdOf, type AppFiles } from "./app.ts";

interface State extends UserState {
  greeting?: string;
}
const define = createDefine<State>();

const fields = (form: FormData) => ({ email: form.get("email"), password: form.get("password") });

/** What the actions answer: the errors, or who is now signed in. */
export type ActionAnswer = { errors?: Record<string, string>; email?: string; ended?: number };

export const AUTH_ACTIONS = "routes/_auth/actions.ts";
export const GUARDED_ACTIONS = "routes/account/_actions.ts";

export const actionIds = {
  join: actionIdOf(AUTH_ACTIONS, "join"),
  logIn: actionIdOf(AUTH_ACTIONS, "logIn"),
  logOut: actionIdOf(AUTH_ACTIONS, "logOut"),
  logOutEverywhere: actionIdOf(AUTH_ACTIONS, "logOutEverywhere"),
  whoAmI: actionIdOf(GUARDED_ACTIONS, "whoAmI"),
};

/** The app, in memory. */
export function authFiles(): AppFiles {
  return {
    routes: {
      "_error.tsx": {
        default: define.errorPage(({ status, message, state }) => (
          <>
            <h1>{status}: {message}</h1>
            {state.user && <p>Signed in as {state.user.email}</p>}
          </>
        )),
      },
      "open.tsx": { default: () => <p>Open to all</p> },
      "account/_middleware.ts": {
        handler: [
          requireUser(),
          define.middleware(async function greet(c, next) {
            c.set("greeting", `Hello, ${c.var.user?.name}`);
            await next();
          }),
        ],
      },
      "account/index.tsx": {
        handler: define.handlers({
          async GET(_req, ctx) {
            // Asked again: the same request's answer, no second read.
            const again = await currentUser(ctx);
            return ctx.render(undefined, { headers: { "X-Again": String(again?.email) } });
          },
        }),
        default: define.page(({ state }) => (
          <p>
            Signed in as <b>{state.user?.email}</b>. {state.greeting}. Keys:{" "}
            <i>{Object.keys(state).sort().join(",")}</i>
          </p>
        )),
      },
      "account/data.ts": {
        handler: define.handlers({
          GET: (_req, ctx) => Response.json({ email: ctx.state.user?.email }),
        }),
      },
      "admin/_middleware.ts": { handler: requireRole("admin") },
      "admin/index.tsx": { default: define.page(({ state }) => <p>Admin {state.user?.email}</p>) },
    },
    actions: {
      [AUTH_ACTIONS]: {
        async join(form: FormData): Promise<ActionAnswer> {
          const result = await signUp(requestContext(), fields(form));
          return result.ok ? { email: result.user.email } : { errors: { ...result.errors } };
        },
        async logIn(form: FormData): Promise<ActionAnswer> {
          const result = await signIn(requestContext(), fields(form));
          return result.ok ? { email: result.user.email } : { errors: { ...result.errors } };
        },
        async logOut(): Promise<ActionAnswer> {
          await signOut(requestContext());
          return {};
        },
        async logOutEverywhere(): Promise<ActionAnswer> {
          return { ended: await signOutEverywhere(requestContext()) };
        },
      },
      [GUARDED_ACTIONS]: {
        // deno-lint-ignore require-await -- every server action is async
        async whoAmI(): Promise<ActionAnswer> {
          return { email: define.context().var.user?.email };
        },
      },
    },
  };
}

/** An action call's whole answer: its status and headers, its body, and the value decoded. */
export interface CallAnswer {
  status: number;
  res: Response;
  text: string;
  answer?: ActionAnswer;
}

/**
 * Calls an action as an island's stub does, through the test kit's client (its cookie jar), and
 * keeps the whole answer. The kit's `call()` gives the value or the `ActionError` alone; these
 * tests read the status and headers too (`Set-Cookie`, `Retry-After`). `origin`: where the page
 * calling it is (an https origin of the app's, say); `headers`: the request's own (a `Cookie` given
 * is sent in place of the jar's).
 */
export async function callAction(
  client: TestClient,
  id: string,
  args: unknown[],
  { origin = client.origin, headers = {} }: { origin?: string; headers?: Record<string, string> } =
    {},
): Promise<CallAnswer> {
  const res = await client.request(new URL(`/_action/${id}`, origin), {
    method: "POST",
    body: encodeCall(args),
    headers: { Origin: origin, Accept: "application/json", ...headers },
  });
  const text = await res.text();
  const answer = res.status === 200 && text ? parse(text) : undefined;
  return { status: res.status, res, answer, text };
}

/** A form of `email` and `password`. */
export function credentials(email: string, password: string): FormData {
  const form = new FormData();
  form.set("email", email);
  form.set("password", password);
  return form;
}

/** The password of every `storedUser`. */
export const STORED_PASSWORD = "correct horse battery";

/** `STORED_PASSWORD`'s hash: made once a process, on the first `storedUser`. */
let storedHash: Promise<string> | undefined;

/**
 * A user in `kv`, as `createUser` stores them (the email normalised, the roles kept), with the
 * password `STORED_PASSWORD`, whose hash all share: a test whose subject is not the password signs
 * them in with `signInAs` and spends no scrypt of its own (`createUser` hashes once a user).
 */
export async function storedUser(
  kv: Deno.Kv,
  email: string,
  { roles }: { roles?: readonly string[] } = {},
): Promise<User> {
  const normal = normalizeEmail(email);
  if (normal === undefined) throw new RangeError(`Not an email address: ${email}`);
  storedHash ??= hashPassword(STORED_PASSWORD);
  return publicUser(await insertUser(kv, { email: normal, roles, passwordHash: await storedHash }));
}
