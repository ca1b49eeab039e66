/**
 * @module
 * Expected errors (`httpError`, `notFound()`), in-process, on an app of routes held in memory: from
 * middleware, handlers, pages before and after the shell, layouts and server actions, each answers
 * with its status and message — the nearest `_error.tsx` inside its layouts, `_404.tsx` for 404, the
 * app's plain page, JSON for API routes and clients that prefer it, `{"error":…}` for an island's
 * action call, the posting page's `_error.tsx` for a form posted without JavaScript — and none is a
 * failure: no digest, no log line, and (with the real Sentry SDK against a receiver on 127.0.0.1)
 * no Sentry event and no 5xx transaction. An error page that fails is a failure like any other.
 */
import assert from "node:assert/strict";
import { Suspense, use } from "react";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import type { App } from "../lib/server.ts";
import {
  type ClientErrorStatus,
  type ErrorPageProps,
  HttpError,
  httpError,
  isHttpError,
  type LayoutProps,
  type Middleware,
  notFound,
  type PageProps,
} from "../lib/mod.ts";
import {
  ActionError,
  httpError as runtimeHttpError,
  isHttpError as runtimeIsHttpError,
} from "../lib/runtime.ts";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { actionIdOf, type AppFiles, memoryApp, memoryManifest } from "./helpers/app.ts";
import { Later, laterTimers } from "./helpers/later.tsx";
import {
  captureLogs,
  isErrorEvent,
  isTransaction,
  type ReceivedItem,
  startSentryReceiver,
  TestClient,
} from "shell/testing";

const ORIGIN = "http://localhost";
const SECRET = "s3cret-unexpected";

/** The product's errors, in one place, as docs/failures.md shows. */
const errors = {
  notMember: () => httpError(403, "Only members can see this board"),
  signIn: () => httpError(401, "Sign in first", { headers: { "WWW-Authenticate": "Bearer" } }),
  titleTaken: (title: string) => httpError(409, `A task named “${title}” exists already`),
  slowDown: () => httpError(429, undefined, { headers: { "Retry-After": "60" } }),
};

function Refuse({ error }: { error: () => HttpError }): never {
  throw error();
}

function Late({ promise }: { promise: Promise<string> }) {
  return <p>{use(promise)}</p>;
}

/** A layout that names itself around what it wraps. */
const layout = (name: string) => ({
  default: ({ Component }: LayoutProps) => (
    <div className={name}>
      <Component />
    </div>
  ),
});

const errorPage = (name: string) => ({
  default: ({ status, message, url }: ErrorPageProps) => (
    <section className={`error-${name}`}>
      <title>{message}</title>
      <h1>{message}</h1>
      <p>
        {name} error page: {status} at {url.pathname}
      </p>
    </section>
  ),
});

/** `?refuse` makes the board's middleware refuse with 403. */
const boardGuard: Middleware = async function boardGuard(c, next) {
  if (c.req.query("refuse") !== undefined) throw errors.notMember();
  await next();
};

/** `?root-refuse` makes the root's middleware refuse with 401: for pages and unknown URLs alike. */
const rootGuard: Middleware = async function rootGuard(c, next) {
  if (c.req.query("root-refuse") !== undefined) throw errors.signIn();
  await next();
};

const actions = {
  "routes/board/_actions.ts": {
    // deno-lint-ignore require-await
    async archive(): Promise<never> {
      throw errors.titleTaken("Groceries");
    },
    // deno-lint-ignore require-await
    async fine(): Promise<string> {
      return "fine";
    },
  },
  "routes/_public/actions.ts": {
    // deno-lint-ignore require-await
    async vote(): Promise<never> {
      throw errors.slowDown();
    },
  },
};

const ROUTES: AppFiles["routes"] = {
  "_app.tsx": {
    default: ({ Component }: LayoutProps) => (
      <html lang="en">
        <head>
          <meta charSet="utf-8" />
        </head>
        <body>
          <Component />
        </body>
      </html>
    ),
  },
  "_layout.tsx": {
    default: ({ Component }: LayoutProps) => (
      <main className="root">
        <Component />
      </main>
    ),
  },
  "_error.tsx": errorPage("root"),
  "_middleware.ts": { handler: rootGuard },
  "_404.tsx": { default: () => <h1>Page not found</h1> },
  "index.tsx": { default: () => <h1>Home</h1> },
  "plain.tsx": { default: () => <Refuse error={errors.signIn} /> },
  "boom.tsx": {
    default: function Boom(): never {
      throw new Error(SECRET);
    },
  },
  "board/_layout.tsx": layout("board"),
  "board/_middleware.ts": { handler: boardGuard },
  "board/_error.tsx": errorPage("board"),
  "board/index.tsx": { default: () => <h1>Board</h1> },
  "board/private.tsx": { default: () => <Refuse error={errors.notMember} /> },
  "board/handler.tsx": {
    handler: {
      GET() {
        throw errors.slowDown();
      },
    },
    default: () => <p>never</p>,
  },
  "board/missing.tsx": { default: () => <Refuse error={notFound} /> },
  "board/in-suspense.tsx": {
    // Fails at once, before the shell is ready: the status is still the error's.
    default: () => (
      <Suspense fallback={<p>Loading…</p>}>
        <Refuse error={errors.notMember} />
      </Suspense>
    ),
  },
  "board/late.tsx": {
    // Fails after the shell went out: the error page's component takes the boundary's place.
    default: function LatePage() {
      const conflict = new Promise<string>((_, reject) =>
        setTimeout(() => reject(errors.titleTaken("Groceries")), 30)
      );
      return (
        <>
          <h1>Before</h1>
          <Suspense fallback={<p>Loading the tasks…</p>}>
            <Late promise={conflict} />
          </Suspense>
          <Suspense fallback={<p>Loading the rest…</p>}>
            <Later ms={60} />
          </Suspense>
        </>
      );
    },
  },
  "board/late-missing.tsx": {
    default: () => (
      <Suspense fallback={<p>Loading…</p>}>
        <Later notFound />
      </Suspense>
    ),
  },
  "board/tasks/_layout.tsx": layout("tasks"),
  "board/tasks/[id].tsx": {
    default: ({ params }: PageProps) => (
      <Refuse
        error={() => httpError(410, `${params.id} gone`)}
      />
    ),
  },
  "board/api.ts": {
    handler: {
      GET() {
        throw errors.notMember();
      },
    },
  },
  "guarded/_layout.tsx": {
    // A layout that refuses: the error page cannot render inside it.
    default: function Guarded(): never {
      throw errors.notMember();
    },
  },
  "guarded/_error.tsx": errorPage("guarded"),
  "guarded/index.tsx": { default: () => <p>never</p> },
  "broken-error/_error.tsx": {
    default: function BrokenError(): never {
      throw new Error(`error page: ${SECRET}`);
    },
  },
  "broken-error/index.tsx": { default: () => <Refuse error={errors.notMember} /> },
};

const FILES: AppFiles = { routes: ROUTES, actions };
const ids = {
  archive: actionIdOf("routes/board/_actions.ts", "archive"),
  fine: actionIdOf("routes/board/_actions.ts", "fine"),
  vote: actionIdOf("routes/_public/actions.ts", "vote"),
};

/** What a browser sends with a form posted from `page`. */
const fromPage = (page: string) => ({
  Origin: ORIGIN,
  "Sec-Fetch-Site": "same-origin",
  Referer: ORIGIN + page,
});

/** An island's call, as the stub posts it. */
const call = (app: App, id: string, page = "/board", query = "") =>
  app.request(`/_action/${id}${query}`, {
    method: "POST",
    body: encodeCall([]),
    headers: { Accept: "application/json", ...fromPage(page) },
  });

/** A form posted with JavaScript off, as a browser sends it. */
const postForm = (app: App, id: string, page: string) => {
  const form = new FormData();
  form.set("title", "Groceries");
  return app.request(`/_action/${id}`, {
    method: "POST",
    body: form,
    headers: { Accept: "text/html,application/xhtml+xml,*/*;q=0.8", ...fromPage(page) },
  });
};

/** The response and its body, without the comments React puts between adjacent texts. */
async function text(res: Response | Promise<Response>) {
  const response = await res;
  return { res: response, body: (await response.text()).replaceAll("<!-- -->", "") };
}

Deno.test("httpError: 4xx only, the status's text by default", () => {
  for (const status of [200, 302, 399, 500, 503, 400.5, NaN, 1e9, -403, "403"]) {
    assert.throws(() => httpError(status as ClientErrorStatus), TypeError, String(status));
  }
  // @ts-expect-error -- a 5xx is a failure, not a refusal: `deno check` says so before a run does
  assert.throws(() => httpError(503), TypeError);
  assert.throws(() => httpError(403, 42 as unknown as string), TypeError);
  assert.equal(httpError(403).message, "Forbidden");
  assert.equal(httpError(422).message, "Unprocessable Content");
  assert.equal(httpError(499).message, "Client Error");
  assert.equal(httpError(409, "Taken").message, "Taken");
  const notHere = notFound();
  assert.ok(notHere instanceof HttpError);
  assert.equal(notHere.status, 404);
  assert.equal(notHere.message, "Not Found");
  assert.ok(isHttpError(errors.notMember()));
  assert.ok(!isHttpError(new Error("x")) && !isHttpError("403") && !isHttpError(null));
  // Another copy of the module (another bundle) makes errors that are still recognised.
  assert.ok(isHttpError(Object.assign(new Error(), { [Symbol.for("app.httpError")]: true })));
});

Deno.test("httpError is shell/runtime's too: a catalogue islands import throws on the server", () => {
  assert.equal(runtimeHttpError, httpError);
  assert.equal(runtimeIsHttpError, isHttpError);
  const locked = runtimeHttpError(409, "Submitted", { code: "count_locked" });
  assert.ok(isHttpError(locked) && locked instanceof HttpError);
  assert.equal(locked.code, "count_locked");
});

Deno.test("ActionError: instanceof holds across copies of its module", () => {
  const own = new ActionError(403, "Only members can see this board", { action: "archive" });
  assert.equal(own.status, 403);
  assert.equal(own.message, "Only members can see this board");
  assert.equal(own.name, "ActionError");
  const fromAnotherBundle = Object.assign(new Error("x"), { name: "ActionError", status: 409 });
  assert.ok(fromAnotherBundle instanceof ActionError);
  assert.ok(!(new Error("x") instanceof ActionError));
});

Deno.test("expected errors in-process", async (t) => {
  using logs = captureLogs();
  using _timers = laterTimers();
  const app = memoryApp(FILES);
  const noLines = (what: string) => assert.deepEqual(logs.lines, [], `${what}: nothing logged`);
  /** Takes the `warn` lines every 429 writes (ops count refusals by them): `count` of them. */
  const rateLimited = (count: number) => {
    const limited = logs.lines.filter((line) => line.msg.startsWith("rate limited: "));
    assert.equal(limited.length, count);
    assert.ok(limited.every((line) => line.level === "warn" && line.status === 429));
    logs.lines.splice(0, Infinity, ...logs.lines.filter((line) => !limited.includes(line)));
  };

  await t.step("middleware: the folder's _error.tsx, inside its layouts", async () => {
    const { res, body } = await text(app.request("/board?refuse"));
    assert.equal(res.status, 403);
    assert.match(body, /<main class="root"><div class="board"><section class="error-board">/);
    assert.match(body, /<title>Only members can see this board<\/title>/);
    assert.match(body, /board error page: 403 at \/board/);
    assert.ok(!body.includes("Digest"));
    noLines("middleware");
  });

  await t.step("a handler: its status, message and headers", async () => {
    const { res, body } = await text(app.request("/board/handler"));
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "60");
    assert.match(body, /<h1>Too Many Requests<\/h1>/);
    rateLimited(1);
    noLines("handler");
  });

  await t.step("a page before the shell, and a Suspense boundary before it", async () => {
    for (const path of ["/board/private", "/board/in-suspense"]) {
      const { res, body } = await text(app.request(path));
      assert.equal(res.status, 403, path);
      assert.match(body, /class="error-board"/, path);
      assert.ok(!body.includes("Loading…"), path);
    }
    noLines("page");
  });

  await t.step("the nearest _error.tsx renders in its own folder's layouts only", async () => {
    const { res, body } = await text(app.request("/board/tasks/t1"));
    assert.equal(res.status, 410);
    assert.match(body, /<div class="board"><section class="error-board"><h1>t1 gone/);
    assert.ok(
      !body.includes('class="tasks"'),
      "a layout below the error page's folder is left out",
    );
    assert.match(body, /t1 gone/);
  });

  await t.step("the root's _error.tsx for a page outside the board", async () => {
    const { res, body } = await text(app.request("/plain"));
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("www-authenticate"), "Bearer");
    assert.match(body, /<main class="root"><section class="error-root">/);
    assert.match(body, /root error page: 401 at \/plain/);
  });

  await t.step("the root's middleware, also in front of an unknown URL", async () => {
    for (const path of ["/?root-refuse", "/no/such/page?root-refuse"]) {
      const { res, body } = await text(app.request(path));
      assert.equal(res.status, 401, path);
      assert.equal(res.headers.get("www-authenticate"), "Bearer");
      assert.match(body, /root error page: 401/, path);
    }
    noLines("root middleware");
  });

  await t.step("404 is still _404.tsx, for notFound() and unknown URLs", async () => {
    for (const path of ["/board/missing", "/no/such/page"]) {
      const { res, body } = await text(app.request(path));
      assert.equal(res.status, 404, path);
      assert.match(body, /<main class="root"><h1>Page not found<\/h1><\/main>/, path);
    }
    noLines("404");
  });

  await t.step("HEAD: the status, no body", async () => {
    const res = await app.request("/board?refuse", { method: "HEAD" });
    assert.equal(res.status, 403);
    assert.equal(await res.text(), "");
  });

  await t.step("JSON for API routes and clients that prefer it", async () => {
    const json = async (path: string, accept?: string) => {
      const res = await app.request(path, accept ? { headers: { Accept: accept } } : undefined);
      assert.match(res.headers.get("content-type") ?? "", /^application\/json/, path);
      return { status: res.status, body: await res.json() };
    };
    assert.deepEqual(await json("/board/api"), {
      status: 403,
      body: { error: { status: 403, message: "Only members can see this board" } },
    });
    assert.deepEqual(await json("/board/api?refuse"), {
      status: 403,
      body: { error: { status: 403, message: "Only members can see this board" } },
    });
    for (const accept of ["application/json", "text/html;q=0.5, application/json"]) {
      assert.deepEqual(await json("/plain", accept), {
        status: 401,
        body: { error: { status: 401, message: "Sign in first" } },
      });
    }
    assert.deepEqual(await json("/nowhere", "application/json"), {
      status: 404,
      body: { error: { status: 404, message: "Not Found" } },
    });
    // A browser's Accept, or `*/*` alone, gets the page.
    for (const accept of ["text/html,application/xhtml+xml,*/*;q=0.8", "*/*"]) {
      const res = await app.request("/plain", { headers: { Accept: accept } });
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/, accept);
      await res.body?.cancel();
    }
    noLines("JSON");
  });

  await t.step("after the shell: in place of the boundary, the status stays 200", async () => {
    const { res, body } = await text(app.request("/board/late"));
    assert.equal(res.status, 200, "the status went out with the shell");
    assert.ok(body.includes("Arrived"), "the rest of the page streamed on");
    // React marks the boundary; the error page's component (no layouts) comes to replace it.
    assert.match(body, /\$RX\("B:0","app-error-0"\)/);
    const html = body.match(/<template id="app-error-0-html">(.*?)<\/template>/)?.[1];
    assert.ok(html, body);
    assert.match(html, /^<title>[^<]*<\/title><section class="error-board"><h1>A task named/);
    assert.ok(!html.includes('class="board"'), "no layout around it");
    assert.match(body, /<noscript><title>[^<]*<\/title><section class="error-board">/);
    assert.ok(!body.includes("noindex"));
    assert.ok(!body.includes("Digest"));
    noLines("after the shell");
  });

  await t.step("notFound() after the shell: _404.tsx in place, noindex", async () => {
    const { res, body } = await text(app.request("/board/late-missing"));
    assert.equal(res.status, 200);
    assert.match(body, /<template id="app-error-0-html"><h1>Page not found<\/h1><\/template>/);
    assert.match(body, /content:"noindex"/);
    noLines("404 after the shell");
  });

  await t.step("an island's action call: the status and {error}", async () => {
    const res = await call(app, ids.archive);
    assert.equal(res.status, 409);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.deepEqual(await res.json(), {
      error: { status: 409, message: "A task named “Groceries” exists already" },
    });
    const limited = await call(app, ids.vote);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get("retry-after"), "60");
    assert.deepEqual(await limited.json(), {
      error: { status: 429, message: "Too Many Requests" },
    });
    rateLimited(1);
    noLines("action call");
  });

  await t.step("middleware in front of an action: the same for its call", async () => {
    const res = await call(app, ids.fine, "/board", "?refuse");
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), {
      error: { status: 403, message: "Only members can see this board" },
    });
    noLines("middleware before an action");
  });

  await t.step("a form posted without JavaScript: the posting page's _error.tsx", async () => {
    const { res, body } = await text(postForm(app, ids.archive, "/board/tasks/t1?x=1"));
    assert.equal(res.status, 409);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.match(body, /<div class="board"><section class="error-board">/);
    assert.match(body, /board error page: 409 at \/board\/tasks\/t1/);

    const root = await text(postForm(app, ids.vote, "/plain"));
    assert.equal(root.res.status, 429);
    assert.match(root.body, /root error page: 429 at \/plain/);

    // A Referer that is not ours: the home page's.
    const elsewhere = await app.request(`/_action/${ids.vote}`, {
      method: "POST",
      body: new FormData(),
      headers: { Origin: ORIGIN, "Sec-Fetch-Site": "same-origin", Referer: "https://evil.test/" },
    });
    assert.equal(elsewhere.status, 429);
    assert.match((await text(elsewhere)).body, /root error page: 429 at \/</);
    rateLimited(2);
    noLines("form post");
  });

  await t.step(
    "a form too large for the action body limit: the page's _error.tsx, 413",
    async () => {
      // An attachment past ACTION_BODY_LIMIT posted without JavaScript ended on a bare
      // "Payload Too Large" in text/plain, outside the app, with nothing to say what to do.
      const small = memoryApp(FILES, { actionBodyLimit: 4096 });
      const form = new FormData();
      form.set("file", new File([new Uint8Array(8192)], "scan.pdf", { type: "application/pdf" }));
      const res = await small.request(`/_action/${ids.archive}`, {
        method: "POST",
        body: form,
        headers: { Accept: "text/html,*/*;q=0.8", ...fromPage("/board/tasks/t1") },
      });
      assert.equal(res.status, 413);
      assert.equal(res.headers.get("connection"), "close");
      assert.match((await text(res)).body, /board error page: 413 at \/board\/tasks\/t1/);

      const called = await small.request(`/_action/${ids.archive}`, {
        method: "POST",
        body: form,
        headers: { Accept: "application/json", ...fromPage("/board") },
      });
      assert.equal(called.status, 413);
      assert.deepEqual(await called.json(), {
        error: { status: 413, message: "Content Too Large", code: "body_too_large" },
      });
      // Refused bodies are logged as warnings (docs/security.md), never as failures.
      assert.deepEqual(logs.lines.splice(0).map((l) => [l.level, l.status, l.digest]), [
        ["warn", 413, undefined],
        ["warn", 413, undefined],
      ]);
    },
  );

  await t.step("middleware in front of a form's action: the page's _error.tsx", async () => {
    const form = new FormData();
    const res = await app.request(`/_action/${ids.fine}?refuse`, {
      method: "POST",
      body: form,
      headers: fromPage("/board"),
    });
    assert.equal(res.status, 403);
    assert.match((await text(res)).body, /board error page: 403 at \/board/);
    noLines("middleware before a form's action");
  });

  await t.step("a layout that refuses too: the plain page, in nothing of the app's", async () => {
    const { res, body } = await text(app.request("/guarded"));
    assert.equal(res.status, 403);
    assert.match(
      body,
      // (Every page's speculation rules come first in <body>: rules, not a script that runs.)
      /<title>Only members can see this board<\/title><\/head><body>(<script type="speculationrules"[^<]*<\/script>)?<main><h1>403 — Only/,
    );
    noLines("refusing layout");
  });

  await t.step("an _error.tsx that fails: the failure screen, a digest, a line", async () => {
    const { res, body } = await text(app.request("/broken-error"));
    assert.equal(res.status, 500);
    assert.ok(!body.includes(SECRET));
    const digest = body.match(/Digest: <code>([^<]+)<\/code>/)?.[1];
    assert.ok(digest);
    const [line] = logs.lines.splice(0);
    assert.equal(line.level, "error");
    assert.equal(line.digest, digest);
    assert.ok(line.error.message.includes(SECRET));
  });

  await t.step("unexpected errors are unchanged: 500, screen, digest, line", async () => {
    const { res, body } = await text(app.request("/boom"));
    assert.equal(res.status, 500);
    assert.ok(!body.includes(SECRET));
    assert.match(body, /a server-side exception has occurred/);
    const [line] = logs.lines.splice(0);
    assert.equal(line.level, "error");
    assert.ok(body.includes(line.digest));
  });
});

Deno.test("a refusal's code from the catalogue: in JSON, on the island's ActionError, to _error.tsx", async () => {
  // A client of an API route or an island that reacts to one refusal (a slot taken: offer
  // another) must not match the message, which is the user's to read and gets reworded.
  const taken = () => httpError(409, "Someone booked this slot first", { code: "slot_taken" });
  using logs = captureLogs();
  const app = memoryApp({
    routes: {
      "api/book.ts": {
        handler: {
          POST: () => {
            throw taken();
          },
        },
      },
      "book.tsx": {
        handler: {
          GET: () => {
            throw taken();
          },
        },
        default: () => <p>never</p>,
      },
      "_error.tsx": {
        default: ({ status, message, code }: ErrorPageProps) => (
          <p className="error">{status} {message} [{code ?? "none"}]</p>
        ),
      },
    },
    actions: {
      "routes/_clinic/actions.ts": {
        // deno-lint-ignore require-await
        async book(): Promise<never> {
          throw taken();
        },
        // deno-lint-ignore require-await
        async plain(): Promise<never> {
          throw httpError(409, "No code here");
        },
      },
    },
  });
  const api = await app.request("/api/book", { method: "POST" });
  assert.equal(api.status, 409);
  assert.deepEqual(await api.json(), {
    error: { status: 409, message: "Someone booked this slot first", code: "slot_taken" },
  });
  const page = await text(app.request("/book"));
  assert.equal(page.res.status, 409);
  assert.match(
    page.body,
    /<p class="error">409 Someone booked this slot first \[slot_taken\]<\/p>/,
  );

  const client = new TestClient(app);
  await assert.rejects(
    client.call(`/_action/${actionIdOf("routes/_clinic/actions.ts", "book")}`),
    (error) => {
      assert.ok(error instanceof ActionError);
      assert.equal(error.status, 409);
      assert.equal(error.code, "slot_taken");
      return true;
    },
  );
  await assert.rejects(
    client.call(`/_action/${actionIdOf("routes/_clinic/actions.ts", "plain")}`),
    (error) => {
      assert.ok(error instanceof ActionError);
      assert.equal(error.code, undefined);
      return true;
    },
  );
  for (const code of ["", "has space", "x".repeat(65), "<b>", 7 as unknown as string]) {
    assert.throws(() => httpError(409, "Taken", { code }), TypeError, JSON.stringify(code));
  }
  assert.deepEqual(logs.lines, []);
});

Deno.test("without _error.tsx or _404.tsx: the app's plain page with the status", async () => {
  const { "_error.tsx": _, "_404.tsx": __, ...routes } = ROUTES;
  delete (routes as Record<string, unknown>)["board/_error.tsx"];
  using logs = captureLogs();
  const app = memoryApp({ routes, actions });
  for (
    const [path, status, heading] of [
      ["/board/private", 403, "403 — Only members can see this board"],
      ["/nowhere", 404, "404 — Not Found"],
    ] as const
  ) {
    const { res, body } = await text(app.request(path));
    assert.equal(res.status, status);
    // Inside `_app` and the root layout, which has the page's `main`.
    assert.match(body, new RegExp(`<main class="root"><h1>${heading}</h1>`));
  }
  // With no `_404.tsx`, a 404 gets the nearest `_error.tsx`.
  const withError = memoryApp({ routes: { ...routes, "board/_error.tsx": errorPage("board") } });
  const { res, body } = await text(withError.request("/board/missing"));
  assert.equal(res.status, 404);
  assert.match(body, /board error page: 404/);
  assert.deepEqual(logs.lines, []);
});

Deno.test("an error page that never finishes in place does not hold the page open", async () => {
  using logs = captureLogs();
  using _timers = laterTimers();
  // The process stays up for the error page's time limit as a server's would (its listener holds
  // it): the limit's own timer never does (lib/server/time_limit.ts), and nothing else here would.
  const serving = setInterval(() => {}, 1_000);
  using _serving = { [Symbol.dispose]: () => clearInterval(serving) };
  const app = memoryApp({
    routes: {
      "_error.tsx": {
        default: function Hanging(): never {
          use(new Promise(() => {}));
          throw new Error("unreachable");
        },
      },
      "late.tsx": {
        default: function LatePage() {
          const refused = new Promise<string>((_, reject) =>
            setTimeout(() => reject(errors.notMember()), 20)
          );
          return (
            <Suspense fallback={<p>Loading…</p>}>
              <Late promise={refused} />
            </Suspense>
          );
        },
      },
    },
  }, { requestTimeoutMs: 300 });
  const { res, body } = await text(app.request("/late"));
  assert.equal(res.status, 200);
  assert.match(body, /<template id="app-error-0-html"><p role="alert">Only members can see/);
  const [line] = logs.lines;
  assert.equal(line.level, "error", "a hanging error page is a bug to hear about");
});

Deno.test("in development an expected error is the same: no details, no digest", async () => {
  using logs = captureLogs();
  const app = memoryApp(FILES, { dev: true });
  const { res, body } = await text(app.request("/board/private"));
  assert.equal(res.status, 403);
  assert.ok(!body.includes("<pre>") && !body.includes("Digest"));
  assert.deepEqual(logs.lines, []);
});

/** The SDK keeps timers and connections of its own between tests: not leaks of the app's. */
const SDK = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "sentry: no event and no 5xx transaction for an expected error",
  ...SDK,
  async fn() {
    using logs = captureLogs();
    using _timers = laterTimers();
    await using receiver = startSentryReceiver();
    // A store in memory: never the project's `.data/`.
    const env: Record<string, string> = {
      SENTRY_DSN: receiver.dsn,
      SENTRY_TRACES_SAMPLE_RATE: "1",
      KV_PATH: ":memory:",
    };
    const settings = readSettings((name) => env[name]);
    const { app } = await appFromEnv(memoryManifest(FILES), settings);
    const expected = [
      () => app.request("/board?refuse"),
      () => app.request("/board/handler"),
      () => app.request("/board/private"),
      () => app.request("/board/in-suspense"),
      () => app.request("/board/late"),
      () => app.request("/board/missing"),
      () => app.request("/board/late-missing"),
      () => app.request("/board/api"),
      () => app.request("/plain", { headers: { Accept: "application/json" } }),
      () => call(app, ids.archive),
      () => call(app, ids.fine, "/board", "?refuse"),
      () => postForm(app, ids.archive, "/board"),
    ];
    for (const request of expected) {
      const res = await request();
      assert.ok(res.status >= 200 && res.status < 500, `${res.url}: ${res.status}`);
      await res.text();
    }
    // Then a failure: once its event arrives, everything sent before it has arrived too.
    const boom = await app.request("/boom");
    const digest = (await boom.text()).match(/Digest: <code>([^<]+)<\/code>/)?.[1];
    await receiver.waitFor((item) => isErrorEvent(item) && item.payload.tags?.digest === digest);
    const { flush } = await import("@sentry/deno");
    await flush(5_000);

    const events = receiver.items.filter(isErrorEvent);
    assert.deepEqual(events.map((event) => event.payload.tags?.digest), [digest]);
    const status = (item: ReceivedItem) =>
      item.payload.contexts.trace.data["http.response.status_code"];
    const transactions = receiver.items.filter(isTransaction);
    const failed = transactions.filter((item) => status(item) >= 500);
    assert.deepEqual(failed.map((item) => item.payload.transaction), ["GET /boom"]);
    // The refusals' transactions carry their 4xx (404s send none, as ever).
    const refused = transactions.filter((item) => status(item) >= 400 && status(item) < 500);
    assert.ok(
      refused.length >= 5,
      `transactions: ${transactions.map((t) => t.payload.transaction)}`,
    );
    assert.ok(!transactions.some((item) => status(item) === 404));
    assert.deepEqual(logs.lines.filter((line) => line.level === "error").length, 1);
  },
});
