/**
 * @module
 * A client for tests that talks to an app as a browser does: in-process through `app.request()`
 * (no socket), or over HTTP to a server's origin. It keeps cookies in a jar (tough-cookie, RFC
 * 6265: paths, expiry, `Max-Age=0`), follows redirects when asked, submits a page's forms as a
 * browser without JavaScript would (`form.ts`) and calls server actions as an island's stub does,
 * decoding the answer with the browser's own code (`lib/client/action_client.ts`); and signs in
 * as a user without a password, through the auth module's own session code (`signInAs`): in the
 * app's store, or for a server's origin in the store the test shares with it. Test-only.
 */
import { CookieJar } from "tough-cookie";
import { foundBy, type SignedIn, signInInProcess, signInToStore } from "../auth/sign_in_as.ts";
import type { User } from "../auth/users.ts";
import { resultOf } from "../client/action_client.ts";
import { Redirect } from "../actions/redirect.ts";
import { encodeCall, REDIRECT_HEADER } from "../shared/action_wire.ts";
import { scopeOfApp } from "../server/scope.ts";
import { type FieldValue, fillForm, type FormChoice } from "./form.ts";

export type { FieldValue };

/**
 * Where a test client sends its requests: an app in this process (`createApp`'s), or the origin of
 * a server (`http://127.0.0.1:8000`).
 *
 * @example
 * ```ts
 * import { TestClient } from "shell/testing";
 * const overHttp = new TestClient("http://127.0.0.1:8000");
 * ```
 */
export type Target = InProcess | string | URL;

/**
 * What the client needs of an app in this process: `createApp`'s `request` (Hono's).
 *
 * @example
 * ```ts
 * import type { App } from "shell/server";
 * import type { InProcess } from "shell/testing";
 * declare const app: App;
 * const target: InProcess = app;
 * ```
 */
export interface InProcess {
  /** Answers a request without a socket. */
  request(request: Request): Response | Promise<Response>;
}

/**
 * A request's options, plus whether to follow redirects as a browser would.
 *
 * @example
 * ```ts
 * import type { ClientRequestInit } from "shell/testing";
 * const init: ClientRequestInit = { method: "POST", body: new FormData(), follow: true };
 * ```
 */
export interface ClientRequestInit extends RequestInit {
  /** Follow redirects (a form's 303 and the like) to the page they lead to; off by default. */
  follow?: boolean;
}

/**
 * Which form `submit` posts, the values to set in it and how.
 *
 * @example
 * ```ts
 * import type { SubmitOptions } from "shell/testing";
 * const options: SubmitOptions = {
 *   form: "#signup",
 *   fields: { email: "ada@example.test", password: "correct horse" },
 *   headers: { "X-Forwarded-For": "198.51.100.7" },
 *   follow: true,
 * };
 * ```
 */
export interface SubmitOptions {
  /**
   * The form: a CSS selector (`"#signup"`, `"form[name=search]"`), or the server action it posts
   * to (the function an island imports, or its URL). The page's only form if not given.
   */
  form?: string | ((...args: never[]) => unknown) | { action: string };
  /** Field values, set over what the page rendered (hidden fields, defaults). */
  fields?: Record<string, FieldValue>;
  /** The submit button to click, a CSS selector within the form; the form's first if not given. */
  button?: string;
  /** Follow the answer's redirect (a server action's 303 back to the page); off by default. */
  follow?: boolean;
  /** Extra request headers (`X-Forwarded-For`, `Authorization`, ...). */
  headers?: Record<string, string>;
}

/**
 * A page as `load()` got it: its forms can be submitted later, as from a tab left open while the
 * data behind it changed (someone else approved the request, deleted the task).
 *
 * @example
 * ```ts
 * import type { LoadedPage } from "shell/testing";
 * const page: LoadedPage = { url: "http://localhost/desk", html: "<form>...</form>" };
 * ```
 */
export interface LoadedPage {
  /** Where it was loaded from, after redirects: resolves the form's action; the `Referer`. */
  readonly url: string;
  /** The page's HTML as it was then. */
  readonly html: string;
}

/**
 * Options of a client.
 *
 * @example
 * ```ts
 * import { TestClient } from "shell/testing";
 * using httpClient = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
 * const client = new TestClient("http://127.0.0.1:8000", { httpClient });
 * ```
 */
export interface TestClientOptions {
  /** For a server's origin: a connection pool of its own (`Deno.createHttpClient`). */
  httpClient?: Deno.HttpClient;
  /**
   * For a server's origin: the server's KV store, opened by the test from the file the server was
   * started with (`KV_PATH`) - what `signInAs` signs in through. An app in this process has its
   * own.
   */
  kv?: Deno.Kv;
}

/**
 * Options of an action call.
 *
 * @example
 * ```ts
 * import type { CallOptions } from "shell/testing";
 * const asAdmin: CallOptions = { headers: { Authorization: `Basic ${btoa("admin:admin")}` } };
 * // The island's stub sending one call again after its connection dropped: the same key.
 * const retried: CallOptions = { submission: "booking-7f3a9c2e1d" };
 * ```
 */
export interface CallOptions {
  /** Extra request headers, as a page's fetch would carry (auth, a proxy's `X-Forwarded-For`). */
  headers?: Record<string, string>;
  /**
   * The call's submission key (16 to 64 of `A-Z a-z 0-9 - _`), sent as the island's stub sends it
   * again when a call's connection dropped: two calls with one key and the same arguments run the
   * action once, the second answered with the first's outcome (docs/actions.md, "Once per
   * submission"). Without it, a call with a form gets a new key each time, as a new click does.
   */
  submission?: string;
}

/** How many redirects `follow` goes through before it gives up, as browsers do (20). */
const MAX_REDIRECTS = 20;

/**
 * A cookie of the client's jar, with its flags: what `TestClient.cookies()` gives, shaped for a
 * browser's `addCookies` (Playwright's) with the origin it is for.
 *
 * @example
 * ```ts
 * import type { ClientCookie } from "shell/testing";
 *
 * const session: ClientCookie = {
 *   name: "session",
 *   value: "abc",
 *   path: "/",
 *   httpOnly: true,
 *   secure: false,
 *   sameSite: "Lax",
 * };
 * ```
 */
export interface ClientCookie {
  /** Its name. */
  name: string;
  /** Its value. */
  value: string;
  /** The path it is sent to and below. */
  path: string;
  /** Out of reach of the page's scripts. */
  httpOnly: boolean;
  /** Sent over https only. */
  secure: boolean;
  /** As the cookie said it, when it did. */
  sameSite?: "Strict" | "Lax" | "None";
  /** When it expires, in seconds since the epoch; a session cookie has none. */
  expires?: number;
}

/**
 * A client whose requests carry the cookies earlier answers set, as a browser's would.
 *
 * @example In-process: a form posted without JavaScript lands back on its page with its errors
 * ```ts
 * import assert from "node:assert/strict";
 * import { createApp, type Manifest } from "shell/server";
 * import { TestClient } from "shell/testing";
 * declare const manifest: Manifest; // import manifest from "@/_build/manifest.gen.ts";
 *
 * const client = new TestClient(createApp(manifest, { root: "." }));
 * const page = await client.submit("/notes", { fields: { text: "" }, follow: true });
 * assert.match(await page.text(), /1 to 200 characters\./);
 * ```
 */
export class TestClient {
  /**
   * The origin requests are made from: for an app in this process, its public origin (the first of
   * `createApp`'s `origins`, as `APP_ORIGIN` gives it), or `http://localhost` without one.
   */
  readonly origin: string;
  readonly #cookies = new CookieJar();
  readonly #send: (request: Request) => Promise<Response>;
  /** The app in this process, when the target is one: what `signInAs` signs in to. */
  readonly #app?: InProcess;
  /** The store a server's origin shares with the test: what `signInAs` signs in through. */
  readonly #kv?: Deno.Kv;
  /**
   * The session `signInAs` began in that store, until the server's answers say what became of it.
   */
  #begun?: SignedIn["cookie"];

  /**
   * A client for `target`: an app made with `createApp`, or a server's origin.
   *
   * @throws {TypeError} For an app in this process with a `kv`: it signs in through its own.
   */
  constructor(target: Target, { httpClient, kv }: TestClientOptions = {}) {
    if (typeof target === "string" || target instanceof URL) {
      this.origin = new URL(target).origin;
      this.#send = (request) => fetch(request, { redirect: "manual", client: httpClient });
      this.#kv = kv;
    } else {
      if (kv) {
        throw new TypeError(
          "kv is for a server's origin: an app in this process signs in through its own store",
        );
      }
      // From the app's public origin, as a browser's requests come: an app made with `origins`
      // answers only their hosts, and sets its cookies (`__Host-` over https) for the first.
      this.origin = new URL(scopeOfApp(target)?.origins?.[0] ?? "http://localhost").origin;
      this.#app = target;
      this.#send = async (request) => await target.request(request);
    }
  }

  /**
   * The value of the cookie `name` the client would send to `path`, if any.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * assert.equal(await client.cookie("session"), undefined);
   * ```
   */
  async cookie(name: string, path = "/"): Promise<string | undefined> {
    const cookies = await this.#cookies.getCookies(new URL(path, this.origin).href);
    return cookies.find((cookie) => cookie.key === name)?.value;
  }

  /**
   * Every cookie the client would send to `path`, flags and all: to hand a session begun with
   * `signInAs` to a browser, say (`context.addCookies(cookies.map((c) => ({ ...c, url })))`).
   *
   * @example
   * ```ts
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   *
   * await client.signInAs("ada@example.com");
   * const names = (await client.cookies()).map((cookie) => cookie.name); // ["session", ...]
   * ```
   */
  async cookies(path = "/"): Promise<ClientCookie[]> {
    const cookies = await this.#cookies.getCookies(new URL(path, this.origin).href);
    const sameSites = { strict: "Strict", lax: "Lax", none: "None" } as const;
    return cookies.map((cookie) => {
      const expires = cookie.expiryTime();
      const sameSite = sameSites[cookie.sameSite as keyof typeof sameSites];
      return {
        name: cookie.key,
        value: cookie.value,
        path: cookie.path ?? "/",
        httpOnly: cookie.httpOnly,
        secure: cookie.secure,
        ...(sameSite && { sameSite }),
        ...(Number.isFinite(expires) && { expires: Math.floor(expires! / 1000) }),
      };
    });
  }

  /**
   * Signs the client in as a user of the app, without a password: a real session, begun by the
   * app's own session code - the same KV records, expiry and roles (as stored), the same cookies,
   * name and flags, as a sign-in through the login form makes, and the client's old session ends
   * as it would there - so every guard, `currentUser`, sign-out and "sign out everywhere" behave as
   * after that sign-in. It hashes no password (a form sign-in hashes one on purpose: ~0.3 s of CPU)
   * and counts against no sign-in limit, so each test can sign in as whom it needs, and a busy
   * machine never turns it away (503). Test the login form itself with `submit`.
   *
   * A server in another process (`deno task start`, `deno serve`, started by the test) is signed
   * in to through the KV store it shares with the test: start it with `KV_PATH` naming a file,
   * open the same file in the test and give it to the client (`new TestClient(origin, { kv })`).
   * The session is the one that server begins at a sign-in: the default settings the entry points
   * give every app, the cookie named and flagged for the client's origin (`__Host-session` and
   * `Secure` when it is https). A server reading another store cannot find the session: the first
   * request that reads it then throws, saying so, instead of answering as to somebody signed out.
   *
   * Safe: it is a call in this process on the object `createApp` returned, or on a store the test
   * opened - nothing routes to it, no request can reach it, no setting turns it on - and it lives
   * in the test kit, which an app's modules never import.
   *
   * @param user The user (`createUser`'s answer) or their email; they must exist in the app's
   *   store.
   * @returns The signed-in user, as the app's `currentUser` will see them.
   * @throws {TypeError} For a client of a server's origin made without the server's `kv`, or of
   *   anything but an app made by `createApp` in this process.
   * @throws {Error} When the app was made without a KV store: it has no users or sessions.
   * @throws {RangeError} When no user has that email, or the user was deleted as the session began.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { createUser } from "shell/auth";
   * import { createApp, type Manifest } from "shell/server";
   * import { TestClient } from "shell/testing";
   * declare const manifest: Manifest; // import manifest from "@/_build/manifest.gen.ts";
   *
   * const kv = await Deno.openKv(":memory:");
   * const app = createApp(manifest, { root: ".", kv });
   * const ada = await createUser(kv, { email: "ada@example.com", password: "unused here" });
   *
   * const client = new TestClient(app);
   * await client.signInAs(ada);
   * assert.equal((await client.get("/account")).status, 200);
   * ```
   *
   * @example A server in a process of its own, on the test's KV file
   * ```ts
   * import assert from "node:assert/strict";
   * import { createUser } from "shell/auth";
   * import { TestClient } from "shell/testing";
   * declare const origin: string; // the server's, started with KV_PATH=file
   * declare const file: string;
   *
   * using kv = await Deno.openKv(file);
   * await createUser(kv, { email: "ada@example.com", password: "unused", roles: ["admin"] });
   * const client = new TestClient(origin, { kv });
   * await client.signInAs("ada@example.com");
   * assert.equal((await client.request("/admin")).status, 200); // signed out: 303 to /login
   * ```
   */
  async signInAs(user: { readonly email: string } | string): Promise<User> {
    const client = { origin: this.origin, cookie: this.cookie.bind(this) };
    let signedIn: SignedIn;
    if (this.#app) signedIn = await signInInProcess(this.#app, user, client);
    else if (this.#kv) {
      signedIn = await signInToStore(this.#kv, user, client);
      this.#begun = signedIn.cookie;
    } else {
      throw new TypeError(
        `signInAs signs in to ${this.origin} through the KV store it was started with: open the ` +
          "same file (KV_PATH) in the test and give it to the client, " +
          "new TestClient(origin, { kv: await Deno.openKv(file) })",
      );
    }
    for (const cookie of signedIn.cookies) await this.#cookies.setCookie(cookie, signedIn.url);
    return signedIn.user;
  }

  /**
   * Sends a request to `path` with the jar's cookies, keeps the cookies the answer sets and, with
   * `follow`, follows redirects (303: a GET; 307, 308: the same method and body).
   *
   * @example
   * ```ts
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * const res = await client.request("/account", { headers: { Accept: "text/html" } });
   * ```
   */
  async request(path: string | URL, init: ClientRequestInit = {}): Promise<Response> {
    return (await this.#follow(path, init)).response;
  }

  /** `request`, and the URL its answer came from: where the redirects followed led. */
  async #follow(
    path: string | URL,
    init: ClientRequestInit,
  ): Promise<{ response: Response; url: URL }> {
    const { follow = false, ...rest } = init;
    let url = new URL(path, this.origin);
    let request = rest;
    for (let hops = 0;; hops++) {
      const response = await this.#exchange(url, request);
      const location = response.headers.get("location");
      if (!follow || !location || response.status < 300 || response.status > 399) {
        return { response: landed(response, url, hops > 0), url };
      }
      if (hops === MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      await response.body?.cancel();
      url = new URL(location, url);
      const keep = response.status === 307 || response.status === 308;
      request = keep ? request : { headers: withoutBodyHeaders(request.headers) };
    }
  }

  /**
   * `GET path`, following redirects unless `follow: false`, as a browser's address bar would.
   *
   * @example
   * ```ts
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * const html = await (await client.get("/notes")).text();
   * ```
   */
  get(path: string | URL, init: ClientRequestInit = {}): Promise<Response> {
    return this.request(path, { follow: true, ...init, method: "GET" });
  }

  /**
   * `GET page` as an address bar does (following redirects), kept for `submit` later: the forms
   * of a tab left open, posted after the data behind them changed.
   *
   * @example
   * ```ts
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * const open = await client.load("/desk");
   * // ... someone else refuses the loan meanwhile ...
   * const res = await client.submit(open, { button: "button[value=approve]", follow: true });
   * ```
   * @throws {Error} When the page does not answer 2xx.
   */
  async load(page: string | URL): Promise<LoadedPage> {
    const { response, url } = await this.#follow(page, { follow: true, headers: { Accept: HTML } });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`GET ${url.pathname} answered ${response.status}`);
    }
    return { url: url.href, html: await response.text() };
  }

  /**
   * Loads `page` (or takes one `load()` got earlier) and submits one of its forms as a browser
   * with JavaScript off does: the fields the page rendered (React's and the framework's hidden
   * ones too), `fields` set over them, the button clicked, sent with the `Origin`, `Referer` and
   * `Accept` a browser sends.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * // import { addNote } from "@/routes/_notes/actions.ts";
   * declare function addNote(previous: unknown, form: FormData): Promise<{ error?: string }>;
   *
   * const res = await client.submit("/notes", { form: addNote, fields: { text: "Hello" } });
   * assert.equal(res.status, 303);
   * assert.equal(res.headers.get("location"), "/notes");
   * ```
   */
  async submit(page: string | URL | LoadedPage, options: SubmitOptions = {}): Promise<Response> {
    const { form, fields = {}, button, follow = false, headers = {} } = options;
    // The page the form is on is where the redirects led (`/login?next=...` for a guarded page):
    // its URL resolves the form's action, is the `Referer`, and names the page in errors.
    const loaded = typeof page === "object" && "html" in page ? page : await this.load(page);
    const pageUrl = new URL(loaded.url);
    const filled = await fillForm(
      loaded.html,
      pageUrl.href,
      formChoice(form),
      fields,
      button,
    );
    const browser = {
      Origin: this.origin,
      Referer: pageUrl.href,
      Accept: HTML,
      "Sec-Fetch-Site": "same-origin",
    };
    if (filled.method === "GET") {
      const url = new URL(filled.url);
      url.search = new URLSearchParams(textEntries(filled.entries)).toString();
      return await this.request(url, { headers: { ...browser, ...headers }, follow });
    }
    const body = filled.enctype === "multipart/form-data"
      ? filled.entries
      : new URLSearchParams(textEntries(filled.entries));
    return await this.request(filled.url, {
      method: "POST",
      body,
      headers: { ...browser, ...headers },
      follow,
    });
  }

  /**
   * Calls a server action as an island does (`fetch` with the arguments encoded as the stub
   * encodes them) and resolves with what it returned, types intact - or rejects with the
   * `ActionError` an island would get (its `status`: 429, 401, 500, ...; its `digest` for a
   * failure), or with the error `redirect()` throws (its `location`) when the action redirected,
   * where an island's page would go. `action` is the function an island
   * imports, as the app in this process registered it, or an action's URL (`/_action/...`).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { TestClient } from "shell/testing";
   * declare const client: TestClient;
   * // import { addNote } from "@/routes/_notes/actions.ts";
   * declare function addNote(previous: unknown, form: FormData): Promise<{ error?: string }>;
   *
   * const state = await client.call(addNote, {}, formOf({ text: "" }));
   * assert.equal(state.error, "1 to 200 characters.");
   * // On success it redirects: the island's page would go there.
   * await assert.rejects(client.call(addNote, {}, formOf({ text: "Hi" })), { location: "/notes" });
   * // Refused by the folder's middleware (a rate limit, say): what an island catches.
   * const refused = await client.call(addNote, {}, formOf({ text: "Hi" })).catch((e) => e);
   * assert.equal(refused.name, "ActionError");
   * assert.equal(refused.status, 429);
   *
   * function formOf(fields: Record<string, string>): FormData {
   *   const form = new FormData();
   *   for (const [name, value] of Object.entries(fields)) form.set(name, value);
   *   return form;
   * }
   * ```
   */
  async call<A extends unknown[], R>(
    action: ((...args: A) => Promise<R>) | string,
    ...args: A
  ): Promise<R>;
  async call(action: string | ((...args: never[]) => unknown), ...args: unknown[]) {
    return await this.#invoke(action, args, {});
  }

  /**
   * `call`, with request headers of the test's (`callWith(fn, [a, b], { headers })`), or the
   * submission key of a call the island's stub sends again (`{ submission }`).
   */
  async callWith<A extends unknown[], R>(
    action: (...args: A) => Promise<R>,
    args: A,
    options?: CallOptions,
  ): Promise<R>;
  /** `callWith` an action's URL (`/_action/...`): its answer typed as the test says (`R`). */
  async callWith<R = unknown>(action: string, args: unknown[], options?: CallOptions): Promise<R>;
  async callWith(
    action: ((...args: never[]) => unknown) | string,
    args: unknown[],
    options: CallOptions = {},
  ): Promise<unknown> {
    return await this.#invoke(action, args, options);
  }

  async #invoke(
    action: ((...args: never[]) => unknown) | string,
    args: unknown[],
    { headers = {}, submission }: CallOptions,
  ): Promise<unknown> {
    const url = typeof action === "string" ? action : urlOf(action);
    const name = typeof action === "string" ? url.split("/").pop()! : action.name;
    // A submission key for a call with a form, as the browser's stub sends: a call is run once.
    const once = submission ??
      (args.some((arg) => arg instanceof FormData) ? crypto.randomUUID() : undefined);
    const response = await this.request(url, {
      method: "POST",
      body: encodeCall(args, once),
      headers: {
        Origin: this.origin,
        "Sec-Fetch-Site": "same-origin",
        Accept: "application/json",
        ...headers,
      },
    });
    const redirect = response.headers.get(REDIRECT_HEADER);
    if (redirect) {
      await response.body?.cancel();
      throw new Redirect(redirect, 303);
    }
    return await resultOf(name, response);
  }

  async #exchange(url: URL, init: RequestInit): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = await this.#cookies.getCookieString(url.href);
    if (cookie && !headers.has("cookie")) headers.set("Cookie", cookie);
    const response = await this.#send(new Request(url, { ...init, headers }));
    const setCookies = response.headers.getSetCookie();
    if (this.#begun && headers.get("cookie")?.includes(this.#begun.token)) {
      await this.#checkFound(setCookies, response);
    }
    for (const set of setCookies) {
      await this.#cookies.setCookie(set, url.href, { ignoreError: true });
    }
    return response;
  }

  /**
   * Throws when the server cleared the cookie of the session `signInAs` began in the test's store
   * while that store still holds it: the server reads another store, and every guarded page would
   * only look signed out. An answer that clears it otherwise (signed out, expired) ends the watch.
   */
  async #checkFound(setCookies: string[], response: Response): Promise<void> {
    const begun = this.#begun!;
    const found = await foundBy(setCookies, this.#kv!, this.origin, begun);
    if (found === undefined) return;
    this.#begun = undefined;
    if (found) return;
    await response.body?.cancel();
    throw new Error(
      `The server at ${this.origin} found no session for the cookie signInAs set, though the KV ` +
        "store given to the client holds it: the server uses another store. Start it with " +
        "KV_PATH naming the file the test opened (Deno.openKv(file)), not :memory: or its default.",
    );
  }
}

const HTML = "text/html,application/xhtml+xml,*/*;q=0.8";

/**
 * The answer as `fetch` gives it in a browser: `url` where the redirects led and `redirected`. An
 * app in this process answers with neither (`app.request` makes the Response), and each hop over
 * HTTP is a `fetch` of its own: without them a test could not ask where the user landed.
 */
function landed(response: Response, url: URL, redirected: boolean): Response {
  Object.defineProperties(response, {
    url: { value: url.href },
    redirected: { value: redirected },
  });
  return response;
}

/** The URL a registered action posts to (`$$FORM_ACTION`, set when an app registers it). */
function urlOf(action: (...args: never[]) => unknown): string {
  const formAction = (action as { $$FORM_ACTION?: (prefix: string) => { action: string } })
    .$$FORM_ACTION;
  if (!formAction) {
    // A test of a server in another process (a client of its origin) meets this first: say how.
    throw new TypeError(
      `${action.name || "this function"} is not a server action of an app made in this process: ` +
        `an action gets its URL when createApp registers it, from the manifest of the last build. ` +
        `An export added to a "use server" module since then is not in it: run deno task build. ` +
        `For a server in another process, ` +
        `make the app in the test too from the same build (createApp(manifest, { root, kv, ` +
        `settings }), never served, settings holding a value for each required setting of ` +
        `routes/_settings.ts): its actions then have that server's URLs. Or pass the URL the ` +
        `page's form posts to (/_action/...).`,
    );
  }
  return formAction("").action;
}

function formChoice(form: SubmitOptions["form"]): FormChoice | undefined {
  if (typeof form === "function") return { action: urlOf(form) };
  return form;
}

function textEntries(entries: FormData): [string, string][] {
  return [...entries].map((
    [name, value],
  ) => [name, typeof value === "string" ? value : value.name]);
}

function withoutBodyHeaders(headers: HeadersInit | undefined): Headers {
  const kept = new Headers(headers);
  for (const name of ["content-type", "content-length", "origin"]) kept.delete(name);
  return kept;
}
