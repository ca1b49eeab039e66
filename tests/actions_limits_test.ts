/**
 * @module
 * Every size and count a client controls in an action call is capped before work proportional to
 * it: the decoder's caps one by one (arguments, values, nesting, BigInt digits, FormData entries,
 * fields, text length, holes, regular expressions), and at the endpoint, in-process, a refused
 * call answers 400 with a warning and never reaches the action or counts as a failure.
 */
import assert from "node:assert/strict";
import { stringify } from "devalue";
import { decodeCall, decodeInvocation, withoutFrameworkFields } from "../lib/actions/decode.ts";
import { PayloadRejected } from "../lib/actions/rejected.ts";
import { ACTION_LIMITS, type ActionLimits } from "../lib/actions/limits.ts";
import { encodeCall } from "../lib/shared/action_wire.ts";
import { captureLogs } from "shell/testing";
import { memoryApp } from "./helpers/app.ts";
import { ids, ORIGIN, probeFiles } from "./helpers/probe_app.tsx";

const L = ACTION_LIMITS;
// devalue's sparse array node with the largest array length: once enough to end the process.
const SPARSE_2_32 = "[[-7,4294967295]]";
// Far above what a refused request takes, far below what the unfixed endpoint took (minutes).
const ANSWER_MS = 5_000;

function fields(entries: [string, string][]): FormData {
  const form = new FormData();
  for (const [name, value] of entries) form.append(name, value);
  return form;
}

const args = (text: string) => fields([["$ACTION_ARGS", text]]);

/** A no-JS form post whose bound arguments are `bound` (devalue text). */
const boundForm = (bound: string) =>
  fields([["$ACTION_REF_1", ""], ["$ACTION_1:bound", bound], ["note", "x"]]);

/** `count` FormData nodes sharing one list of `entries` entries, as one argument. */
function sharedFormData(count: number, entries: number): string {
  const first = 5;
  const nodes = [
    "[1]",
    `[${Array.from({ length: count }, (_, i) => first + i)}]`,
    `[${Array(entries).fill(3)}]`,
    "[4,4]",
    '"k"',
    ...Array(count).fill('["FormData",2]'),
  ];
  return `[${nodes}]`;
}

/** 1 MB of distinct framework fields, as a form posts them without JavaScript. */
function manyFrameworkFields(): string {
  const pairs: string[] = [];
  for (let i = 0, size = 0; size < 1_000_000; i++) {
    pairs.push(`%24ACTION_${i}=`);
    size += pairs.at(-1)!.length + 1;
  }
  return pairs.join("&");
}

function rejects(decode: () => unknown, cap?: keyof ActionLimits, message?: string) {
  assert.throws(decode, (error) => {
    assert.ok(error instanceof PayloadRejected, String(error));
    assert.equal(error.cap, cap);
    if (message) assert.equal(error.message, message);
    return true;
  });
}

/** A list nested `levels` deep around 0. */
function nested(levels: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

Deno.test("client-chosen sizes at the endpoint: refused with 400, the app unharmed", async (t) => {
  using logs = captureLogs();
  const app = memoryApp(probeFiles);
  const headers = { Origin: ORIGIN, "Sec-Fetch-Site": "same-origin" };

  /** Posts `body` to `id`; the answer's status and text, or a failure if none comes in time. */
  const post = async (id: string, body: BodyInit, type?: string) => {
    const res = await app.request(`/_action/${id}`, {
      method: "POST",
      body,
      headers: type ? { ...headers, "Content-Type": type } : headers,
      signal: AbortSignal.timeout(ANSWER_MS),
    });
    return { status: res.status, text: await res.text() };
  };
  const unharmed = async (from: number) => {
    const page = await app.request("/probe", { signal: AbortSignal.timeout(ANSWER_MS) });
    await page.body?.cancel();
    assert.equal(page.status, 200);
    const lines = logs.lines.slice(from);
    assert.deepEqual(lines.filter((line) => "probe" in line), [], "an action ran");
    assert.deepEqual(lines.filter((line) => line.level === "error" || "digest" in line), []);
    return lines;
  };

  await t.step(
    "a sparse list of length 2^32-1, as arguments and as a form's bound ones",
    async () => {
      const from = logs.lines.length;
      for (
        const [id, body] of [[ids.echo, args(SPARSE_2_32)], [ids.late, boundForm(SPARSE_2_32)]]
      ) {
        assert.deepEqual(await post(id as string, body), {
          status: 400,
          text: "Bad Request: arrays with holes are not accepted",
        });
      }
      const warnings = (await unharmed(from)).filter((line) => line.level === "warn");
      assert.deepEqual(
        warnings.map(({ msg, action, cap }) => ({ msg, action, cap })),
        [ids.echo, ids.late].map((action) => ({
          msg: "action call refused: arrays with holes are not accepted",
          action,
          cap: null,
        })),
      );
    },
  );

  await t.step("5,000 FormData arguments sharing one 40,000-entry list", async () => {
    const from = logs.lines.length;
    const { status, text } = await post(ids.echo, args(sharedFormData(5000, 40_000)));
    assert.equal(status, 400);
    assert.equal(text, `Bad Request: a FormData of more than ${L.formDataEntries} entries`);
    // Within the entries cap, the sharing still counts at each reference.
    const shared = await post(ids.echo, args(sharedFormData(5000, L.formDataEntries)));
    assert.deepEqual(shared, { status: 400, text: `Bad Request: more than ${L.values} values` });
    const [entries, values] = (await unharmed(from)).filter((line) => line.level === "warn");
    assert.equal(entries.cap, "formDataEntries");
    assert.equal(values.cap, "values");
    assert.equal(values.action, ids.echo);
  });

  await t.step(
    "1 MB of distinct framework fields in a form posted without JavaScript",
    async () => {
      const from = logs.lines.length;
      const body = manyFrameworkFields();
      const res = await post(ids.late, body, "application/x-www-form-urlencoded");
      assert.deepEqual(res, {
        status: 400,
        text: `Bad Request: more than ${L.fields} form fields`,
      });
      const [warning] = (await unharmed(from)).filter((line) => line.level === "warn");
      assert.equal(warning.cap, "fields");
      assert.equal(warning.action, ids.late);
    },
  );

  await t.step("a refused call is no failure: a warning, no digest", async () => {
    const from = logs.lines.length;
    const over = await app.request(`/_action/${ids.echo}`, {
      method: "POST",
      body: encodeCall(Array(L.arguments + 1).fill(0)),
      headers: { Origin: ORIGIN },
    });
    assert.equal(over.status, 400);
    assert.equal(await over.text(), `Bad Request: more than ${L.arguments} arguments`);
    const [warning, ...more] = logs.lines.slice(from);
    assert.deepEqual(more, []);
    assert.equal(warning.level, "warn");
    assert.equal(warning.cap, "arguments");
    assert.equal(warning.action, ids.echo);
    assert.ok(!("digest" in warning));
  });
});

Deno.test("the number of arguments is capped, bound ones included", () => {
  assert.equal(decodeCall(encodeCall(Array(L.arguments).fill(0))).length, L.arguments);
  rejects(() => decodeCall(encodeCall(Array(L.arguments + 1).fill(0))), "arguments");

  const form = (bound: number) => boundForm(stringify(Array(bound).fill(0)));
  assert.equal(decodeInvocation(form(L.arguments - 1)).args.length, L.arguments);
  rejects(
    () => decodeInvocation(form(L.arguments)),
    "arguments",
    `more than ${L.arguments} arguments`,
  );
});

Deno.test("the values in the arguments are capped, a shared one counted at each place", () => {
  // The list of arguments, the list, and its items.
  const list = (items: number) => encodeCall([Array(items).fill(0)]);
  assert.equal((decodeCall(list(L.values - 2))[0] as unknown[]).length, L.values - 2);
  rejects(() => decodeCall(list(L.values - 1)), "values", `more than ${L.values} values`);

  // Each FormData node revives the shared list again: 3 per entry, 2 for the nodes.
  const entries = L.formDataEntries;
  const fits = Math.floor((L.values - 2) / (3 * entries + 2));
  const [forms] = decodeCall(args(sharedFormData(fits, entries))) as [FormData[]];
  assert.equal(forms.length, fits);
  assert.equal([...forms.at(-1)!].length, entries);
  rejects(() => decodeCall(args(sharedFormData(fits + 1, entries))), "values");

  // Each level references the next twice: 2^60 values as a tree, 62 nodes as devalue sends it.
  const laughs = ["[1]", ...Array.from({ length: 60 }, (_, i) => `[${i + 2},${i + 2}]`), "0"];
  rejects(() => decodeCall(args(`[${laughs}]`)), "values");
});

Deno.test("nesting is capped, along the longest path", () => {
  // The list of arguments is the first level and 0 the last.
  assert.deepEqual(decodeCall(encodeCall([nested(L.depth - 2)])), [nested(L.depth - 2)]);
  rejects(
    () => decodeCall(encodeCall([nested(L.depth - 1)])),
    "depth",
    `nested deeper than ${L.depth} levels`,
  );
  // A chain whose links are all listed first, shallow: devalue reaches each at level 3.
  const links = [[]] as unknown[][];
  while (links.length < L.depth) links.unshift([links[0]]);
  rejects(() => decodeCall(encodeCall([links.toReversed()])), "depth");
  // Deeper than the stack could go, without the cap.
  const chain = Array.from({ length: 100_000 }, (_, i) => `[${i + 1}]`);
  rejects(() => decodeCall(args(`[${chain},0]`)), "depth");
});

Deno.test("BigInt digits are capped", () => {
  const at = 10n ** BigInt(L.bigintDigits - 1);
  assert.deepEqual(decodeCall(encodeCall([at, -at])), [at, -at]);
  rejects(
    () => decodeCall(encodeCall([at * 10n])),
    "bigintDigits",
    `a BigInt longer than ${L.bigintDigits} digits`,
  );
  rejects(() => decodeCall(encodeCall([-at * 10n])), "bigintDigits");
});

Deno.test("the entries of a FormData argument are capped", () => {
  const form = (entries: number) => {
    const data = new FormData();
    for (let i = 0; i < entries; i++) data.append("k", "v");
    return data;
  };
  const [back] = decodeCall(encodeCall([form(L.formDataEntries)])) as [FormData];
  assert.equal([...back].length, L.formDataEntries);
  rejects(
    () => decodeCall(encodeCall([form(L.formDataEntries + 1)])),
    "formDataEntries",
    `a FormData of more than ${L.formDataEntries} entries`,
  );
});

Deno.test("the query entries of a URLSearchParams or URL argument are capped", () => {
  // `a&a&...`: the most entries a text of its length makes.
  const query = (entries: number) => "a&".repeat(entries - 1) + "a";
  const [params, url] = decodeCall(
    encodeCall([
      new URLSearchParams(query(L.formDataEntries)),
      new URL(`https://app.example/?${query(L.formDataEntries)}`),
    ]),
  ) as [URLSearchParams, URL];
  assert.equal(params.size, L.formDataEntries);
  assert.equal(url.searchParams.size, L.formDataEntries);
  rejects(
    () => decodeCall(encodeCall([new URLSearchParams(query(L.formDataEntries + 1))])),
    "formDataEntries",
    `a URLSearchParams of more than ${L.formDataEntries} query entries`,
  );
  rejects(
    () => decodeCall(encodeCall([new URL(`https://app.example/?${query(L.formDataEntries + 1)}`)])),
    "formDataEntries",
    `a URL of more than ${L.formDataEntries} query entries`,
  );
  // Within the entries cap, each entry is a value: ten of them shared, 100,010 values.
  const shared = JSON.stringify([
    Array(10).fill(1),
    ["URLSearchParams", query(L.formDataEntries)],
  ]);
  rejects(() => decodeCall(args(shared)), "values", `more than ${L.values} values`);
  // 1 MB of them (half a million entries, some 40 MB once parsed): refused before parsing.
  rejects(
    () => decodeCall(args(JSON.stringify([[1], ["URLSearchParams", query(520_000)]]))),
    "formDataEntries",
  );
});

Deno.test("the fields of a request are capped, in a call and in a form", () => {
  const withFields = (body: FormData, count: number) => {
    for (let i = [...body].length; i < count; i++) body.append(`f${i}`, "");
    return body;
  };
  assert.deepEqual(decodeCall(withFields(encodeCall([1]), L.fields)), [1]);
  rejects(
    () => decodeCall(withFields(encodeCall([1]), L.fields + 1)),
    "fields",
    `more than ${L.fields} form fields`,
  );
  const [form] = decodeInvocation(withFields(new FormData(), L.fields)).args as [FormData];
  assert.equal([...form].length, L.fields);
  rejects(() => decodeInvocation(withFields(new FormData(), L.fields + 1)), "fields");
});

Deno.test("the length of the devalue text is capped", () => {
  // `[[1],"…"]`: 8 characters around the string.
  const text = (length: number) => `[[1],"${"x".repeat(length - 8)}"]`;
  assert.equal((decodeCall(args(text(L.payloadLength)))[0] as string).length, L.payloadLength - 8);
  rejects(
    () => decodeCall(args(text(L.payloadLength + 1))),
    "payloadLength",
    `arguments longer than ${L.payloadLength} characters`,
  );
  rejects(() => decodeInvocation(boundForm(text(L.payloadLength + 1))), "payloadLength");
});

Deno.test("holes, sparse arrays, regular expressions and what the stub cannot send are refused", () => {
  const sparse = [];
  sparse[1_000_000] = 1;
  // deno-lint-ignore no-sparse-arrays -- the point
  for (const holey of [[1, , 2], sparse]) rejects(() => decodeCall(encodeCall([holey])));
  for (
    const text of [
      SPARSE_2_32,
      "[[-7,1e8]]",
      "[[-2]]",
      "[[1.5]]",
      "[[-8]]",
      "[[9007199254740993]]",
      "[[1]]",
      "[[1],1e999]",
      "[{}]",
      "[-1]",
      '[[1],{"__proto__":2},0]',
      '[[1],["Nope",2],"x"]',
      '[[1],["Date",{}]]',
      '[[1],["BigInt","0x10"]]',
      '[[1],["Uint8Array",2],[]]',
      '[[1],["Uint8Array",2,0,1000000000],["ArrayBuffer","AAAA"]]',
      '[[1],["Blob",2],"elsewhere"]',
      '[[1],["FormData",2],"not a list"]',
      '[[1],["Map",2]]',
      '[[1],["null",2,2],0]',
    ]
  ) {
    rejects(() => decodeCall(args(text)));
  }
  // A RegExp is never compiled: making this one (2.8 KB) held the event loop for seconds.
  const emoji = JSON.stringify([[1], ["RegExp", "\\p{RGI_Emoji}".repeat(200), "v"]]);
  for (
    const decode of [
      () => decodeCall(encodeCall([/a/])),
      () => decodeCall(args(emoji)),
      () => decodeInvocation(boundForm(stringify([/a/]))),
      () => decodeInvocation(boundForm(emoji)),
    ]
  ) {
    rejects(decode, undefined, "regular expressions are not accepted");
  }
  rejects(
    () => decodeCall(args('[[1],["Blob",2],"$ACTION_FILE_0"]')),
    undefined,
    "a file of the arguments is missing",
  );
  // Files and FormData come only with a call, never in bound arguments.
  rejects(() => decodeInvocation(boundForm('[[1],["FormData",2],[]]')));
  rejects(() => decodeInvocation(boundForm('[[1],["Blob",2],"$ACTION_FILE_0"]')));
});

Deno.test("everything the stub can send still arrives", async () => {
  const cyclic: Record<string, unknown> = { name: "loop" };
  cyclic.self = cyclic;
  const shared = { n: 1 };
  const buffer = new Uint8Array([1, 2, 3, 4]).buffer;
  const form = new FormData();
  form.append("file", new File(["hello"], "hello.txt"));
  form.append("$ACTION_KEY", "k");
  const nullProto = Object.assign(Object.create(null), { a: 1 });
  const values = [
    undefined,
    null,
    NaN,
    -0,
    Infinity,
    -Infinity,
    "text",
    2n ** 70n,
    new Date(0),
    new URL("https://example.com/x?y=1"),
    new URLSearchParams("a=1&b=2"),
    new Map<unknown, unknown>([[shared, shared]]),
    new Set([1, "1"]),
    new Uint16Array(buffer, 2, 1),
    new DataView(buffer),
    buffer,
    Object(1),
    nullProto,
    cyclic,
    [shared, shared],
    form,
  ];
  const body = await new Response(encodeCall(values)).formData();
  const back = decodeCall(body);
  assert.deepEqual(back.slice(0, -1), values.slice(0, -1));
  const [[key, value]] = back[11] as Map<unknown, unknown>;
  assert.equal(key, value);
  const [first, second] = back[19] as unknown[];
  assert.equal(first, second);
  assert.equal((back[18] as typeof cyclic).self, back[18]);
  const [name, file] = [...(back.at(-1) as FormData)][0] as [string, File];
  assert.equal(name, "file");
  assert.equal(await file.text(), "hello");
});

Deno.test("the framework's fields are stripped in one pass", () => {
  const form = new URLSearchParams(manyFrameworkFields());
  form.append("note", "kept");
  const body = new FormData();
  for (const [name, value] of form) body.append(name, value);
  const start = performance.now();
  const stripped = withoutFrameworkFields(body);
  // Quadratic, this took over 20 s; linear, some milliseconds.
  assert.ok(performance.now() - start < 2_000);
  assert.deepEqual([...stripped], [["note", "kept"]]);
});
