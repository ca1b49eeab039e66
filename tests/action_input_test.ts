/**
 * @module
 * An action's declared input (`formOf`, `parseForm`: lib/actions/input.ts), over real HTTP with
 * the real Sentry SDK against a receiver on 127.0.0.1: a call made by hand that sends a string
 * where the action takes a `FormData` is the product's 400 with code `not_a_form` - no failure
 * line, no Sentry event, the action's body never reached - where an action that reads the form
 * unchecked fails (500, a line, an event). A form `parseForm` refuses is the action's state (200,
 * the messages by field); one it takes is its typed output, a field sent twice a list.
 */
import assert from "node:assert/strict";
import * as v from "valibot";
import { appFromEnv } from "../lib/cli/app.ts";
import { readSettings } from "../lib/cli/settings.ts";
import { formOf } from "../lib/mod.ts";
import { parseForm } from "../lib/data.ts";
import { decodeResult, encodeCall } from "../lib/shared/action_wire.ts";
import { captureLogs, isErrorEvent, startSentryReceiver } from "shell/testing";
import { actionIdOf, memoryManifest, serveApp } from "./helpers/app.ts";

const FILE = "routes/_notes/actions.ts";
const Note = v.object({
  title: v.pipe(v.string(), v.trim(), v.minLength(1, "Give the note a title.")),
  tags: v.optional(v.union([v.string(), v.array(v.string())])),
});
type NoteState = { errors?: Record<string, string[]>; added?: v.InferOutput<typeof Note> };

/** How many times each action's body ran. */
const ran: Record<string, number> = { pin: 0, add: 0, unchecked: 0 };

const actions = {
  // deno-lint-ignore require-await
  async pin(form: FormData): Promise<string> {
    const id = formOf(form).get("id");
    ran.pin++;
    return typeof id === "string" ? id : "";
  },
  async add(_previous: NoteState, form: FormData): Promise<NoteState> {
    const parsed = await parseForm(Note, form);
    ran.add++;
    if (!parsed.ok) return { errors: parsed.fields };
    return { added: parsed.output };
  },
  // deno-lint-ignore require-await
  async unchecked(form: FormData): Promise<string> {
    ran.unchecked++;
    return String(form.get("id")); // a string sent: a TypeError
  },
};
const id = (name: keyof typeof actions) => actionIdOf(FILE, name);

Deno.test({
  name: "a string sent by hand to an action that declares a form: 400 not_a_form, no failure",
  sanitizeOps: false, // the Sentry SDK's timers
  sanitizeResources: false,
  async fn() {
    using logs = captureLogs();
    await using receiver = startSentryReceiver();
    const env: Record<string, string> = { SENTRY_DSN: receiver.dsn, KV_PATH: ":memory:" };
    const { app } = await appFromEnv(
      memoryManifest({
        routes: { "index.tsx": { default: () => null } },
        actions: { [FILE]: actions },
      }),
      readSettings((name) => env[name]),
    );
    await using served = serveApp(app);
    const call = (name: keyof typeof actions, args: unknown[]) =>
      served.fetch(`/_action/${id(name)}`, {
        method: "POST",
        body: encodeCall(args),
        headers: {
          Accept: "application/json",
          Origin: served.origin,
          "Sec-Fetch-Site": "same-origin",
        },
      });

    for (const [name, args] of [["pin", ["x"]], ["add", [{}, "x"]], ["add", [{}]]] as const) {
      const res = await call(name, [...args]);
      assert.equal(res.status, 400, `${name}(${JSON.stringify(args)})`);
      assert.deepEqual(await res.json(), {
        error: { status: 400, message: "Expected a form", code: "not_a_form" },
      });
    }
    assert.deepEqual([ran.pin, ran.add], [0, 0], "the bodies never went on");

    const form = (entries: [string, string][]) => {
      const data = new FormData();
      for (const [name, value] of entries) data.append(name, value);
      return data;
    };
    const refused = await call("add", [{}, form([["title", "  "]])]);
    assert.equal(refused.status, 200);
    assert.deepEqual(decodeResult(await refused.text()), {
      errors: { title: ["Give the note a title."] },
    });
    const added = await call("add", [
      {},
      form([["title", " Milk "], ["tags", "a"], ["tags", "b"]]),
    ]);
    assert.deepEqual(decodeResult(await added.text()), {
      added: { title: "Milk", tags: ["a", "b"] },
    });
    assert.deepEqual(decodeResult(await (await call("pin", [form([["id", "7"]])])).text()), "7");
    assert.deepEqual(logs.lines.filter((line) => line.level === "error"), []);

    // The same call to an action that reads it unchecked: a failure, with its event.
    const failed = await call("unchecked", ["x"]);
    assert.equal(failed.status, 500);
    const { digest } = await failed.json();
    await receiver.waitFor((item) => isErrorEvent(item) && item.payload.tags?.digest === digest);
    const { flush } = await import("@sentry/deno");
    await flush(5_000);
    const events = receiver.items.filter(isErrorEvent);
    assert.deepEqual(events.map((event) => event.payload.tags?.digest), [digest], "one event");
    assert.equal(logs.lines.filter((line) => line.level === "error").length, 1);
  },
});

Deno.test("attack 21: parseForm reads a form of 10,000 names (the cap a client may send) in one pass", async () => {
  const form = new FormData();
  for (let i = 0; i < 10_000; i++) form.append(`field${i}`, "x");
  form.append("field1", "y");
  // How many entries the form's readers walk (each call walks all of them, getAll too): one
  // getAll per name walked 100 million, some 300 ms of a worker's time for an 80 KB post.
  let walked = 0;
  const size = 10_001;
  const { getAll, entries, keys, values } = FormData.prototype;
  form.getAll = (name) => (walked += size, getAll.call(form, name));
  form.entries = () => (walked += size, entries.call(form));
  form.keys = () => (walked += size, keys.call(form));
  form.values = () => (walked += size, values.call(form));
  form[Symbol.iterator] = form.entries;
  const parsed = await parseForm(v.object({ field1: v.array(v.string()) }), form);
  assert.deepEqual(parsed, { ok: true, output: { field1: ["x", "y"] } });
  assert.ok(walked <= 3 * size, `${walked} entries walked for ${size}`);
});
