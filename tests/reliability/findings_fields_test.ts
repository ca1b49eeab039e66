/**
 * Issue 22, finding 7: the fields cap of an action call (10,000) is enforced while the body
 * arrives, not after `formData()` has parsed all of it. A body that has gone past the cap in its
 * first bytes gets its 400 then — it is not waited for, and never parsed — whether it is
 * `a&a&…` or multipart parts. (Before, a mebibyte of `a&a&…` was parsed whole, half a million
 * fields on the server's one thread, and only then refused.)
 */
import assert from "node:assert/strict";
import type { TestServer } from "../helpers/server.ts";
import { builtTarget, exchange, startTarget } from "./target.ts";

const MIB = 1024 * 1024;
/** Well short of the deadline: the answer must not wait for the rest of the body. */
const ANSWER_MS = 8_000;

const FILES = {
  "routes/_findings/actions.ts": `"use server";
    export async function echo(...args: unknown[]) {
      return args.length;
    }
  `,
};

function postHead(server: TestServer, id: string, type: string): string {
  return [
    `POST /_action/${id} HTTP/1.1`,
    `Host: 127.0.0.1:${server.port}`,
    `Origin: ${server.origin}`,
    `Content-Type: ${type}`,
    // All of it announced, a part of it sent: the rest never comes.
    `Content-Length: ${MIB}`,
  ].join("\r\n") + "\r\n\r\n";
}

/** The status of a form `body` posted as a browser does to the action `id`. */
async function posted(
  server: { origin: string; fetch(path: string, init?: RequestInit): Promise<Response> },
  id: string,
  body: BodyInit,
): Promise<number> {
  const res = await server.fetch(`/_action/${id}`, {
    method: "POST",
    body,
    headers: { Origin: server.origin },
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("finding 7: the fields cap refuses a body as it arrives", async (t) => {
  const built = await builtTarget(FILES);
  const { echo } = await built.actionIds();
  await using server = await startTarget({ REQUEST_TIMEOUT_MS: "20000" }, { root: built.root });

  const refusedEarly = async (type: string, start: Uint8Array) => {
    const res = await exchange(server.port, postHead(server, echo, type), {
      body: start,
      timeoutMs: ANSWER_MS,
      headOnly: true,
    });
    assert.equal(res.status, 400, `answered after ${Math.round(res.ms)} ms (0: not yet)`);
    assert.match(new TextDecoder().decode(res.body), /more than 10000 form fields/);
    await server.waitForLog((line) => line.cap === "fields");
  };

  await t.step("a&a&…: 32,768 fields in the first 64 KiB", async () => {
    await refusedEarly(
      "application/x-www-form-urlencoded",
      new TextEncoder().encode("a&".repeat(32 * 1024)),
    );
  });

  await t.step("multipart: 10,100 parts in the first 600 KB", async () => {
    const part = '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n';
    await refusedEarly(
      "multipart/form-data; boundary=b",
      new TextEncoder().encode(part.repeat(10_100)),
    );
  });

  await t.step("within the cap, a form still arrives whole", async () => {
    const body = new URLSearchParams(Array.from({ length: 9_999 }, (_, i) => [`f${i}`, "x"]));
    assert.equal(await posted(server, echo, body), 303, "the form ran and went back to its page");
  });
});

/**
 * Attack 9: the fields cap read the multipart boundary its own way - the last `boundary=` of the
 * header, a quoted one up to its first `"` - where Deno's form parser (WHATWG's MIME type
 * parser) reads the first, unescaped; and a `Content-Type` it did not know as a form went to
 * `formData()` uncounted, which Deno parses as multipart when its last type is. Each such body
 * was taken whole and parsed - 20,000 parts of a mebibyte, some 250 ms of the server's thread -
 * before anything counted them. Now the boundary is read as the parser reads it, the body is
 * parsed by the boundary it was counted by, and a body that is not plainly a form is refused
 * unread.
 */
Deno.test("attack 9: the fields cap counts by the boundary the form is parsed by", async (t) => {
  const built = await builtTarget(FILES);
  const { echo } = await built.actionIds();
  await using server = await startTarget({ REQUEST_TIMEOUT_MS: "20000" }, { root: built.root });
  const parts = (boundary: string) =>
    new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n`.repeat(10_100),
    );
  const answer = (type: string, boundary: string) =>
    exchange(server.port, postHead(server, echo, type), {
      body: parts(boundary),
      timeoutMs: ANSWER_MS,
      headOnly: true,
    });

  await t.step("boundary named twice: the first is the one the parser takes", async () => {
    const res = await answer("multipart/form-data; boundary=b; boundary=decoy", "b");
    assert.equal(res.status, 400, `answered after ${Math.round(res.ms)} ms (0: not yet)`);
    assert.match(new TextDecoder().decode(res.body), /more than 10000 form fields/);
  });

  await t.step("a quoted boundary with an escaped quote", async () => {
    const res = await answer('multipart/form-data; boundary="a\\"b"', 'a"b');
    assert.equal(res.status, 400, `answered after ${Math.round(res.ms)} ms (0: not yet)`);
    assert.match(new TextDecoder().decode(res.body), /more than 10000 form fields/);
  });

  await t.step("a Content-Type that is not plainly a form is refused unread", async () => {
    // The endpoint takes it for a form (it begins as one); Deno parses its last type.
    const res = await answer(
      "application/x-www-form-urlencoded, multipart/form-data; boundary=b",
      "b",
    );
    assert.equal(res.status, 400, `${res.status} after ${Math.round(res.ms)} ms (0: not yet)`);
  });

  await t.step("a browser's form, multipart and urlencoded, still arrives whole", async () => {
    for (const body of [new FormData(), new URLSearchParams()]) {
      body.append("said", "hello");
      assert.equal(await posted(server, echo, body), 303, "the form ran and went back to its page");
    }
  });
});
