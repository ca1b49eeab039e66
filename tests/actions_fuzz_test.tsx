/**
 * @module
 * Property-based fuzzing of the action endpoint, in-process: valid calls, mutated and adversarial
 * devalue payloads, forms posted without JavaScript and raw bodies. Whatever comes in, the app
 * answers below 500 and in time, runs the action only for the requests it accepts, and still
 * answers at the end. On a failure fast-check prints the seed; `FUZZ_SEED=<seed>` replays it.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { ACTION_LIMITS } from "../lib/actions/limits.ts";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { captureLogs } from "shell/testing";
import { actionIdOf, memoryApp } from "./helpers/app.ts";

const RUNS = 500;
// Per request: the largest bodies here take some 100 ms on 2 quiet cores, and seconds on a
// machine shared with other test runs; the endpoint before the caps took minutes. A bound that
// catches that, not one that measures speed.
const ANSWER_MS = 10_000;

/** What the fuzzer posts: a body, and its type when it is not a FormData. */
interface Request {
  body: BodyInit;
  type?: string;
}

// An action that cannot fail, whatever it gets: any 5xx is the endpoint's.
// deno-lint-ignore require-await -- every server action is async
async function sink(...args: unknown[]): Promise<number> {
  console.log(JSON.stringify({ probe: "sink" }));
  return args.length;
}

function fields(entries: [string, string | File][]): FormData {
  const form = new FormData();
  for (const [name, value] of entries) form.append(name, value);
  return form;
}

const argsField = (text: string): Request => ({ body: fields([["$ACTION_ARGS", text]]) });

// ——— Values the stub can send ———

const file = fc.tuple(fc.string(), fc.string()).map(([name, text]) => new File([text], name));
const formData = fc.array(fc.tuple(fc.string(), fc.oneof(fc.string(), file)), { maxLength: 4 })
  .map((entries) => fields(entries));
const leaf = fc.oneof(
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constantFrom(null, undefined, NaN, -0, Infinity, -Infinity),
  fc.bigInt(),
  fc.date(),
  fc.uint8Array({ maxLength: 8 }),
  file,
  formData,
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fc.string().filter((key) => key !== "__proto__"), tie("value"), {
      maxKeys: 4,
    }),
    fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((e) => new Map(e)),
    fc.array(tie("value"), { maxLength: 4 }).map((values) => new Set(values)),
    tie("value").map((shared) => [shared, shared]),
  ),
}));
const validArgs = fc.array(value, { maxLength: 6 });

// ——— Mutations of a valid payload's flat node list ———

const badRef = fc.oneof(
  fc.constantFrom(-1, -2, -3, -6, -7, -8, -1e9, 2 ** 32 - 1, 2 ** 53 + 2, 1e308, 0.5, 0, "NaN"),
  fc.integer({ min: -10, max: 40 }),
);
const bigLength = fc.constantFrom(2 ** 32 - 1, 2 ** 32, 1e8, 1e6, -1, 0.5);
const badNode: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(fc.constant(-7), bigLength, badRef, badRef),
  fc.tuple(fc.constant(-2), badRef),
  fc.tuple(fc.constantFrom("FormData", "Blob", "Object", "Set", "Map", "null"), badRef),
  fc.tuple(fc.constantFrom("Uint8Array", "DataView"), badRef, bigLength, bigLength),
  fc.nat({ max: 20_000 }).map((digits) => ["BigInt", "9".repeat(digits)]),
  fc.constantFrom(
    ["Date", {}],
    ["RegExp", "(a+)+$", "zz"],
    ["ArrayBuffer", "!!"],
    ["URL", "not a url"],
    ["Temporal.Instant", "x"],
    ["null", "__proto__", 0],
    ["Blob", 0],
    ["Nope"],
    JSON.parse('{"__proto__":0}'),
    "$ACTION_FILE_0",
  ),
  fc.jsonValue({ maxDepth: 3 }),
);
/** `to` in place of a reference (`ref`) or a node (`node`), or as a node referenced (`append`). */
interface Mutation {
  kind: "ref" | "node" | "append";
  at: number;
  to: unknown;
}
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("ref" as const), at: fc.nat(), to: badRef }),
  fc.record({
    kind: fc.constantFrom("node" as const, "append" as const),
    at: fc.nat(),
    to: badNode,
  }),
);

/** Applies `mutations` to devalue's node list in `text`, in place of nodes or references. */
function mutate(text: string, mutations: Mutation[]): string {
  const nodes = JSON.parse(text) as unknown[];
  for (const { kind, at, to } of mutations) {
    if (kind === "node") {
      nodes[at % nodes.length] = to;
      continue;
    }
    if (kind === "append") nodes.push(to);
    const node = nodes[at % nodes.length];
    const target = kind === "append" ? nodes.length - 1 : to;
    if (Array.isArray(node) && node.length > 0) node[at % node.length] = target;
    else if (node !== null && typeof node === "object") {
      const keys = Object.keys(node);
      if (keys.length > 0) (node as Record<string, unknown>)[keys[at % keys.length]] = target;
    }
  }
  return JSON.stringify(nodes);
}

const mutated = fc.tuple(validArgs, fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([args, mutations]) => {
    const body = encodeCall(args);
    body.set("$ACTION_ARGS", mutate(body.get("$ACTION_ARGS") as string, mutations));
    return { body } as Request;
  });

// ——— Adversarial shapes, built at sizes near and past the caps ———

const list = (refs: number[] | string) => `[${refs}]`;
const adversarial: fc.Arbitrary<Request> = fc.oneof(
  // A sparse list of arguments: as a call, and as a form's bound arguments.
  bigLength.map((length) => argsField(`[[-7,${length}]]`)),
  bigLength.map((length) => ({
    body: fields([["$ACTION_REF_1", ""], ["$ACTION_1:bound", `[[-7,${length}]]`]]),
  })),
  // FormData nodes sharing one list of entries.
  fc.tuple(fc.nat({ max: 5_000 }), fc.nat({ max: 40_000 })).map(([count, entries]) => {
    const forms = Array.from({ length: count }, (_, i) => 5 + i);
    const nodes = ["[1]", list(forms), list(Array(entries).fill(3)), "[4,4]", '"k"'];
    return argsField(list([...nodes, ...Array(count).fill('["FormData",2]')].join(",")));
  }),
  // A chain of nested lists, each node referencing the next.
  fc.nat({ max: 120_000 }).map((n) =>
    argsField(list([...Array.from({ length: n }, (_, i) => `[${i + 1}]`), "0"].join(",")))
  ),
  // Each level references the next twice: 2^levels values as a tree.
  fc.integer({ min: 1, max: 100 }).map((levels) => {
    const nodes = Array.from({ length: levels }, (_, i) => `[${i + 1},${i + 1}]`);
    return argsField(list(["[1]", ...nodes, "0"].join(",")));
  }),
  // Many Blob nodes naming one file, and a list as wide as the body allows.
  fc.nat({ max: 80_000 }).map((n) => {
    const blobs = Array.from({ length: n }, (_, i) => 3 + i);
    const nodes = ["[1]", list(blobs), '"$ACTION_FILE_0"', ...Array(n).fill('["Blob",2]')];
    const body = fields([["$ACTION_ARGS", list(nodes.join(","))]]);
    body.append("$ACTION_FILE_0", new File(["x"], "x.txt"));
    return { body };
  }),
  fc.nat({ max: 300_000 }).map((n) => argsField(`[[1],${list(Array(n).fill(2))},0]`)),
  fc.nat({ max: 200_000 }).map((digits) => argsField(`[[1],["BigInt","${"7".repeat(digits)}"]]`)),
  // Deep JSON, balanced or not, which devalue never sees.
  fc.nat({ max: 300_000 }).map((n) => argsField("[".repeat(n) + "]".repeat(n % 3 ? n : 1))),
  // More arguments than the cap allows, or just as many.
  fc.integer({ min: ACTION_LIMITS.arguments - 1, max: 5_000 }).map((n) =>
    argsField(`[${list(Array(n).fill(1))},0]`)
  ),
);

// ——— Forms and raw bodies ———

const fieldName = fc.oneof(
  fc.string(),
  fc.constantFrom("$ACTION_ARGS", "$ACTION_REF_1", "$ACTION_1:bound", "$ACTION_KEY", "note"),
  fc.nat().map((n) => `$ACTION_${n}`),
);
const fieldValue = fc.oneof(
  fc.string(),
  fc.jsonValue().map((json) => JSON.stringify(json)),
  validArgs.map((args) => encodeCall(args).get("$ACTION_ARGS") as string),
  file,
);
const form = fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 12 })
  .map((entries): Request => ({ body: fields(entries) }));
const urlencoded = fc.array(fc.tuple(fieldName, fc.string()), { maxLength: 12 })
  .map((entries): Request => ({
    body: new URLSearchParams(entries).toString(),
    type: "application/x-www-form-urlencoded",
  }));
const manyFields = fc.tuple(fc.nat({ max: 25_000 }), fc.boolean(), fc.boolean())
  .map(([n, framework, multipart]): Request => {
    const names = Array.from({ length: n }, (_, i) => `${framework ? "$ACTION_" : "f"}${i}`);
    if (!multipart) {
      const body = names.map((name) => `${encodeURIComponent(name)}=`).join("&");
      return { body, type: "application/x-www-form-urlencoded" };
    }
    const parts = names.map((name) =>
      `--B\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`
    );
    return { body: parts.join("\r\n") + "\r\n--B--\r\n", type: "multipart/form-data; boundary=B" };
  });
const rawMultipart = fc.array(
  fc.oneof(
    fc.constantFrom(
      "--B\r\n",
      "--B--\r\n",
      "\r\n",
      'Content-Disposition: form-data; name="$ACTION_ARGS"\r\n',
      'Content-Disposition: form-data; name="$ACTION_FILE_0"; filename="a"\r\n',
      'Content-Disposition: form-data; name="$ACTION_REF_1"\r\n',
      "Content-Type: text/plain\r\n",
      "[[-7,4294967295]]",
    ),
    fc.string(),
  ),
  { maxLength: 30 },
).map((chunks): Request => ({ body: chunks.join(""), type: "multipart/form-data; boundary=B" }));

/** The request as fast-check prints a counterexample: the fields or the text, each clipped. */
function described({ body, type }: Request): Request {
  const clip = (text: string) =>
    text.length > 300 ? `${text.slice(0, 300)}… (${text.length})` : text;
  const fields = body instanceof FormData &&
    [...body].map((
      [name, value],
    ) => [clip(name), typeof value === "string" ? clip(value) : `File(${value.size})`]);
  const text = fields ? JSON.stringify(fields) : clip(String(body));
  const print = () => `${type ?? "multipart/form-data"} ${text}`;
  return Object.assign({ body, type }, { [fc.toStringMethod]: print });
}

const request = fc.oneof(
  validArgs.map((args): Request => ({ body: encodeCall(args) })),
  mutated,
  adversarial,
  fc.jsonValue().map((json) => argsField(JSON.stringify(json))),
  form,
  urlencoded,
  manyFields,
  rawMultipart,
).map(described);

Deno.test("the action endpoint survives whatever a client posts", async () => {
  using logs = captureLogs();
  const file = "routes/_fuzz/actions.ts";
  const app = memoryApp({
    routes: { "index.tsx": { default: () => <h1>Up</h1> } },
    actions: { [file]: { sink } },
  });
  const id = actionIdOf(file, "sink");
  let accepted = 0;

  await fc.assert(
    fc.asyncProperty(request, async ({ body, type }) => {
      const start = performance.now();
      const res = await app.request(`/_action/${id}`, {
        method: "POST",
        body,
        headers: { Origin: "http://localhost", ...(type ? { "Content-Type": type } : {}) },
        signal: AbortSignal.timeout(3 * ANSWER_MS),
      });
      const text = await res.text();
      const ms = performance.now() - start;
      assert.ok(res.status < 500, `${res.status}: ${text.slice(0, 200)}`);
      assert.ok(ms < ANSWER_MS, `answered in ${Math.round(ms)} ms`);
      if (res.status < 400) accepted++;
    }),
    { numRuns: RUNS, seed: Number(Deno.env.get("FUZZ_SEED")) || undefined },
  );

  const home = await app.request("/");
  await home.body?.cancel();
  assert.equal(home.status, 200);
  const { lines } = logs;
  assert.equal(lines.filter((line) => "probe" in line).length, accepted, "a refused request ran");
  assert.deepEqual(lines.filter((line) => line.level === "error"), []);
});
