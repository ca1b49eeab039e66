/**
 * @module
 * A product's own settings (`routes/_settings.ts`, `defineSettings`): read from the environment
 * with the framework's into one message (`readSettings`), never showing a secret's value; read,
 * typed, by a handler, a middleware and a server action of an app in memory; given by a test as
 * `AppOptions.settings`, each one not given as if unset. The exit of a real start is
 * `tests/process/product_settings_test.ts`.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { readSettings, SettingsError } from "../lib/cli/settings.ts";
import { defineSettings, requestContext, secret } from "../lib/mod.ts";
import type { AnyContext, Context } from "../lib/mod.ts";
import { flag, list, wholeNumber } from "../lib/settings/values.ts";
import { captureLogs, TestClient } from "../lib/testing.ts";
import { memoryApp } from "./helpers/app.ts";

const KEY = "sk_live_4f9a8c7e6d5b4a3c2e1f";

const settings = defineSettings({
  PAGE_SIZE: v.optional(wholeNumber(1, 100, "a number of rows"), "20"),
  BETA: v.optional(flag, "0"),
  REGIONS: v.optional(list(v.picklist(["eu", "us"], "expected eu or us"))),
  PAYMENTS_URL: v.pipe(v.string(), v.url("expected a URL")),
  PAYMENTS_KEY: secret(v.pipe(v.string(), v.regex(/^sk_live_\w{20,}$/, "expected sk_live_..."))),
});

const GOOD = { PAYMENTS_URL: "https://pay.example", PAYMENTS_KEY: KEY };
const read = (env: Record<string, string>) =>
  readSettings((name) => env[name], settings).app.settings;

Deno.test("each variable becomes its typed value; unset ones their defaults", () => {
  assert.deepEqual(read(GOOD), {
    PAGE_SIZE: 20,
    BETA: false,
    REGIONS: undefined,
    ...GOOD,
  });
  assert.deepEqual(read({ ...GOOD, PAGE_SIZE: "7", BETA: "yes", REGIONS: "eu, us" }), {
    PAGE_SIZE: 7,
    BETA: true,
    REGIONS: ["eu", "us"],
    ...GOOD,
  });
  // An empty variable is unset, as for the framework's.
  assert.equal(read({ ...GOOD, PAGE_SIZE: "" })?.PAGE_SIZE, 20);
});

Deno.test("a required setting not set is named", () => {
  assert.throws(() => read({ PAYMENTS_KEY: KEY }), (error) => {
    assert.ok(error instanceof SettingsError);
    assert.deepEqual(error.problems, ["PAYMENTS_URL: required, and not set"]);
    return true;
  });
  assert.throws(() => read({ PAYMENTS_URL: "https://pay.example", PAYMENTS_KEY: "" }), {
    message: /PAYMENTS_KEY: required, and not set/,
  });
});

Deno.test("a malformed value is named with what it should be", () => {
  assert.throws(() => read({ ...GOOD, PAGE_SIZE: "lots", BETA: "maybe", REGIONS: "eu,asia" }), {
    message: "Invalid settings:\n" +
      "  PAGE_SIZE=lots: expected a number of rows\n" +
      "  BETA=maybe: expected 1 or 0\n" +
      "  REGIONS=eu,asia: expected eu or us",
  });
  assert.throws(() => read({ ...GOOD, PAGE_SIZE: "1000" }), {
    message: /PAGE_SIZE=1000: expected a number of rows, at most 100/,
  });
});

Deno.test("the framework's problems and the product's in one message, framework's first", () => {
  assert.throws(
    () => read({ ...GOOD, REQUEST_TIMEOUT_MS: "soon", PAGE_SIZE: "0", PAYMENTS_URL: "nope" }),
    (error) => {
      assert.ok(error instanceof SettingsError);
      assert.deepEqual(error.problems, [
        "REQUEST_TIMEOUT_MS=soon: expected milliseconds (0 turns the deadline off)",
        "PAGE_SIZE=0: expected a number of rows, at least 1",
        "PAYMENTS_URL=nope: expected a URL",
      ]);
      return true;
    },
  );
});

Deno.test("a secret's value never appears in a problem, nor any part of it", () => {
  const secrets = defineSettings({
    CUSTOM: secret(v.pipe(v.string(), v.regex(/^sk_/, "expected a key starting sk_"))),
    DEFAULT_MESSAGE: secret(v.pipe(v.string(), v.minLength(40))),
    URL_WITH_TOKEN: secret(v.pipe(v.string(), v.url())),
    TRIMMED: secret(v.pipe(v.string(), v.trim(), v.startsWith("sk_"))),
    PICKED: secret(v.picklist(["alpha-token", "beta-token"])),
    OPTIONAL: v.optional(secret(v.pipe(v.string(), v.email()))),
  });
  const env: Record<string, string> = {
    CUSTOM: "pk_hunter2hunter2",
    DEFAULT_MESSAGE: "hunter2-short-key",
    URL_WITH_TOKEN: "not a url hunter2",
    TRIMMED: "  hunter2-untrimmed  ",
    PICKED: "gamma-hunter2",
    OPTIONAL: "hunter2.not-an-email",
  };
  assert.throws(() => readSettings((name) => env[name], secrets), (error) => {
    assert.ok(error instanceof SettingsError);
    assert.deepEqual(
      error.problems.map((problem) => problem.split(" ")[0]),
      Object.keys(env),
      "each secret named",
    );
    for (const value of Object.values(env)) {
      for (const part of [value, value.trim(), "hunter2"]) {
        assert.ok(!error.message.includes(part), `${part} in\n${error.message}`);
      }
    }
    // What the product wrote is kept; valibot's messages, which quote the value, say what was
    // expected instead.
    assert.match(error.message, /CUSTOM \(a secret, its value not shown\): expected a key/);
    assert.match(error.message, /DEFAULT_MESSAGE \(a secret, its value not shown\): expected >=40/);
    return true;
  });
});

Deno.test("attack 21: a schema that throws on a value (a secret's JSON parsed) is a problem naming it, never the value", () => {
  const json = defineSettings({
    SERVICE_ACCOUNT: secret(v.pipe(v.string(), v.transform((text) => JSON.parse(text)))),
    LIMITS: v.pipe(v.string(), v.transform((text) => JSON.parse(text))),
  });
  const env: Record<string, string> = {
    SERVICE_ACCOUNT: "private_key=hunter2hunter2", // JSON.parse's message quotes it
    LIMITS: "{nope",
  };
  assert.throws(() => readSettings((name) => env[name], json), (error) => {
    assert.ok(error instanceof SettingsError, String(error));
    assert.ok(!error.message.includes("hunter2"), error.message);
    assert.match(error.message, /SERVICE_ACCOUNT \(a secret, its value not shown\): /);
    assert.match(error.message, /LIMITS=\{nope: /);
    return true;
  });
  // A test's own value, checked by the same schema.
  assert.throws(
    () => memoryApp({ routes: {}, settings: json }, { settings: env }),
    (error) => {
      assert.ok(error instanceof SettingsError, String(error));
      assert.ok(!error.message.includes("hunter2"), error.message);
      return true;
    },
  );
});

Deno.test("a product's setting cannot take a framework's name", () => {
  const clash = defineSettings({
    PORT: v.optional(v.string()),
    SENTRY_KEY: v.optional(v.string()),
  });
  assert.throws(() => readSettings(() => undefined, clash), {
    message: /PORT: the framework's own setting[^\n]*\n {2}SENTRY_KEY: the framework's own/,
  });
  assert.throws(() => defineSettings({ "page-size": v.string() }), /not an environment variable/);
});

/** At compile time: each value has its schema's output type, and only declared names exist. */
export function typedRead(ctx: AnyContext): void {
  const values = settings(ctx);
  // @ts-expect-error PAGE_SIZE is a number
  const _size: string = values.PAGE_SIZE;
  // @ts-expect-error REGIONS may be unset
  const _regions: string[] = values.REGIONS;
  // @ts-expect-error not declared
  values.PAGESIZE;
  // @ts-expect-error read-only
  values.BETA = true;
}

/** An app in memory whose handler, middleware and action read the settings. */
function settingsApp(given?: Record<string, unknown>) {
  const seen: unknown[] = [];
  async function payWith() {
    const { PAYMENTS_URL } = settings(requestContext());
    return await Promise.resolve(PAYMENTS_URL);
  }
  const app = memoryApp({
    settings,
    routes: {
      "_middleware.ts": {
        handler: async (c: Context, next: () => Promise<void>) => {
          seen.push(settings(c).BETA);
          await next();
        },
      },
      "api/page.ts": {
        handler: (_req: Request, ctx: AnyContext) => {
          // Typed where it is read: a number, a boolean, a string.
          const { PAGE_SIZE, BETA, PAYMENTS_KEY }: {
            PAGE_SIZE: number;
            BETA: boolean;
            PAYMENTS_KEY: string;
          } = settings(ctx);
          return Response.json({ PAGE_SIZE, BETA, keyLength: PAYMENTS_KEY.length });
        },
      },
    },
    actions: { "routes/_pay/actions.ts": { payWith } },
  }, { settings: given });
  return { app, seen, payWith };
}

Deno.test("a handler, a middleware and an action read the app's values, typed", async () => {
  const { app, seen, payWith } = settingsApp({ ...GOOD, PAGE_SIZE: 3, BETA: true });
  const client = new TestClient(app);
  const page = await client.get("/api/page");
  assert.deepEqual(await page.json(), { PAGE_SIZE: 3, BETA: true, keyLength: KEY.length });
  assert.equal(await client.call(payWith), "https://pay.example");
  assert.deepEqual(seen, [true, true], "the middleware read them for the page and the action");
  await app.close();
});

Deno.test("a test gives its own values, the environment untouched; the rest are as if unset", async () => {
  Deno.env.set("PAGE_SIZE", "99"); // never read by an app made with createApp
  try {
    const { app } = settingsApp({ PAYMENTS_URL: "http://127.0.0.1:1", PAYMENTS_KEY: KEY });
    const page = await new TestClient(app).get("/api/page");
    assert.deepEqual(await page.json(), { PAGE_SIZE: 20, BETA: false, keyLength: KEY.length });
    await app.close();
  } finally {
    Deno.env.delete("PAGE_SIZE");
  }
  // Two apps in one process, each with its own.
  const a = settingsApp({ ...GOOD, PAGE_SIZE: 1 }).app;
  const b = settingsApp({ ...GOOD, PAGE_SIZE: 2 }).app;
  assert.equal((await (await a.request("/api/page")).json()).PAGE_SIZE, 1);
  assert.equal((await (await b.request("/api/page")).json()).PAGE_SIZE, 2);
  await Promise.all([a.close(), b.close()]);
});

Deno.test("a test that leaves out a required setting, or names one not declared, is told so", () => {
  assert.throws(() => settingsApp({ PAYMENTS_URL: "https://pay.example" }), {
    name: "SettingsError",
    message: /PAYMENTS_KEY: required, and not set/,
  });
  assert.throws(() => settingsApp({ ...GOOD, PAGESIZE: 3 }), {
    message: /AppOptions.settings: PAGESIZE not declared in routes\/_settings.ts/,
  });
  assert.throws(() => memoryApp({ routes: {} }, { settings: { PAGE_SIZE: 3 } }), {
    message: /PAGE_SIZE not declared/,
  });
});

Deno.test("a test's values are checked by their schemas, as the environment's text is, named the same way", async () => {
  const refused = (given: Record<string, unknown>) => {
    let problems: string[] = [];
    assert.throws(() => settingsApp({ ...GOOD, ...given }), (error) => {
      assert.ok(error instanceof SettingsError, String(error));
      problems = error.problems;
      return true;
    });
    return problems;
  };
  assert.deepEqual(refused({ PAYMENTS_URL: "not a url" }), [
    "PAYMENTS_URL=not a url: expected a URL",
  ]);
  assert.deepEqual(refused({ PAYMENTS_URL: 42 }), ["PAYMENTS_URL=42: expected a URL"]);
  assert.deepEqual(refused({ PAGE_SIZE: 500, REGIONS: ["eu", "asia"] }), [
    "PAGE_SIZE=500: expected a number of rows, at most 100",
    "REGIONS=eu,asia: expected eu or us",
  ]);
  assert.deepEqual(refused({ BETA: "maybe" }), ["BETA=maybe: expected 1 or 0"]);
  assert.deepEqual(refused({ PAYMENTS_URL: undefined }), ["PAYMENTS_URL: required, and not set"]);
  assert.deepEqual(refused({ PAYMENTS_KEY: "pk_test" }), [
    "PAYMENTS_KEY (a secret, its value not shown): expected sk_live_...",
  ]);
  // Values, as `settings(ctx)` reads them: what the schema makes of a text is taken.
  const { app } = settingsApp({ ...GOOD, PAGE_SIZE: 3, BETA: true, REGIONS: ["us"] });
  assert.deepEqual(await (await app.request("/api/page")).json(), {
    PAGE_SIZE: 3,
    BETA: true,
    keyLength: KEY.length,
  });
  await app.close();
});

Deno.test("an app made without these settings says so where they are read", async () => {
  const other = defineSettings({ X: v.optional(v.string(), "x") });
  const app = memoryApp({
    settings: other,
    routes: {
      "api/page.ts": {
        handler: (_req: Request, ctx: AnyContext) => Response.json(settings(ctx)),
      },
    },
  });
  using logs = captureLogs();
  const response = await app.request("/api/page");
  assert.equal(response.status, 500);
  await response.body?.cancel();
  assert.match(String(logs.of(response)[0].msg), /not made with these settings/);
  await app.close();
});

Deno.test("any synchronous Standard Schema declares a setting; an asynchronous one is named", () => {
  const upper = {
    "~standard": {
      version: 1 as const,
      vendor: "hand-made",
      validate: (value: unknown) =>
        typeof value === "string" && /^[A-Z]+$/.test(value)
          ? { value: value.toLowerCase() }
          : { issues: [{ message: "expected capitals" }] },
      types: undefined as { input: string; output: string } | undefined,
    },
  };
  const later = v.pipeAsync(v.string(), v.checkAsync(async () => await Promise.resolve(true)));
  const values = readSettings(
    (name) => name === "MODE" ? "FAST" : undefined,
    defineSettings({ MODE: upper }),
  );
  const declared = defineSettings({ MODE: upper, LATER: v.optionalAsync(later) });
  assert.equal(values.app.settings?.MODE, "fast");
  assert.throws(
    () =>
      readSettings(
        (name) => ({ MODE: "slow", LATER: "x" } as Record<string, string>)[name],
        declared,
      ),
    {
      message: "Invalid settings:\n  MODE=slow: expected capitals\n" +
        "  LATER: its schema is asynchronous; a setting's must check at once",
    },
  );
});

const ENTRIES = "expected a number of entries";
/** As the example's `GUESTBOOK_SHOWN`: text in, a number out; a JSON text; a switch. */
const shown = defineSettings({
  SHOWN: v.optional(v.pipe(v.string(), v.digits(ENTRIES), v.toNumber(), v.minValue(1)), "5"),
  LIMITS: v.optional(v.pipe(v.string(), v.transform((text) => JSON.parse(text)))),
  BETA: v.optional(flag, "0"),
});

/** What a handler of an app given `given` reads of `shown`, each value with its type. */
async function heldBy(given: Record<string, unknown>) {
  const app = memoryApp({
    settings: shown,
    routes: {
      "api/held.ts": {
        handler: (_req: Request, ctx: AnyContext) => {
          const held = Object.entries(shown(ctx)).map(([name, value]) => [
            name,
            { value, type: typeof value },
          ]);
          return Response.json(Object.fromEntries(held));
        },
      },
    },
  }, { settings: given });
  const held = await (await app.request("/api/held")).json();
  await app.close();
  return held;
}

Deno.test("a test's text its schema takes is held as what the schema makes of it, as from the environment", async () => {
  const env = { SHOWN: "3", LIMITS: '{"a":1}', BETA: "on" };
  assert.deepEqual(readSettings((name) => env[name as keyof typeof env], shown).app.settings, {
    SHOWN: 3,
    LIMITS: { a: 1 },
    BETA: true,
  });
  assert.deepEqual(await heldBy(env), {
    SHOWN: { value: 3, type: "number" },
    LIMITS: { value: { a: 1 }, type: "object" },
    BETA: { value: true, type: "boolean" },
  });
  // Given as the schema's output already: held as it is.
  assert.deepEqual(await heldBy({ SHOWN: 3, LIMITS: { a: [1] }, BETA: true }), {
    SHOWN: { value: 3, type: "number" },
    LIMITS: { value: { a: [1] }, type: "object" },
    BETA: { value: true, type: "boolean" },
  });
  assert.deepEqual((await heldBy({ LIMITS: [1, 2] })).LIMITS, { value: [1, 2], type: "object" });
});

Deno.test("a test's setting given as undefined holds its default, as an unset variable does", async () => {
  assert.deepEqual(await heldBy({ SHOWN: undefined, BETA: undefined }), {
    SHOWN: { value: 5, type: "number" },
    LIMITS: { type: "undefined" },
    BETA: { value: false, type: "boolean" },
  });
});
