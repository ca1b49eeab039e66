/**
 * @module
 * A small app of the tests' own for `shell/auth` (`authFiles`: modules in memory for `memoryApp`;
 * `AUTH_FILES`: the same as source files for `builtCopy`): a page and an API route guarded by
 * `requireUser()`, an admin page behind `requireRole("admin")`, an open page that never asks who
 * is signed in, an `_error.tsx`, and server actions that sign up, in and out. Beside it, what a
 * browser does with them: a cookie jar, and calls to the actions as an island's stub makes them and
 * as a form posted without JavaScript.
 */
import { parse } from "devalue";
import { createDefine, type ErrorPageProps, requestContext } from "../../lib/mod.ts";
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
import { encodeCall } from "../../lib/shared/action_wire.ts";
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
        default: ({ status, message }: ErrorPageProps) => <h1>{status}: {message}</h1>,
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

/** `app.request`, or `fetch` on a served origin: what the helpers below send requests with. */
export type Send = (path: string, init?: RequestInit) => Promise<Response>;

/** A browser's cookies for one site: what `Set-Cookie` set, sent back as `Cookie`. */
export class Jar {
  readonly cookies = new Map<string, string>();

  /** Takes the response's cookies (a `Max-Age=0` one is removed). */
  take(res: Response): Response {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      if (attributes.some((a) => /^\s*max-age=0$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(at + 1));
    }
    return res;
  }

  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** `send` with this jar's cookies, taking what the response sets. */
  async send(send: Send, path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has("Cookie")) headers.set("Cookie", this.header);
    return this.take(await send(path, { redirect: "manual", ...init, headers }));
  }
}

export interface CallOptions {
  origin?: string;
  headers?: Record<string, string>;
}

/** Calls an action as an island's stub does; answers with its status and decoded result. */
export async function callAction(
  jar: Jar,
  send: Send,
  id: string,
  args: unknown[],
  { origin = "http://localhost", headers = {} }: CallOptions = {},
): Promise<{ status: number; res: Response; answer?: ActionAnswer; text: string }> {
  const res = await jar.send(send, `/_action/${id}`, {
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

/** Posts a form to an action as a browser does with JavaScript off, from `page`. */
export function postForm(
  jar: Jar,
  send: Send,
  id: string,
  form: FormData,
  { origin = "http://localhost", page = "/", headers = {} }: CallOptions & { page?: string } = {},
): Promise<Response> {
  return jar.send(send, `/_action/${id}`, {
    method: "POST",
    body: form,
    headers: { Origin: origin, Referer: origin + page, Accept: "text/html", ...headers },
  });
}
