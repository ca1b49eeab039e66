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
    const res = await server.fetch(`/_action/${echo}`, {
      method: "POST",
      body,
      headers: { Origin: server.origin },
    });
    await res.body?.cancel();
    assert.equal(res.status, 303, "the form ran and went back to its page");
  });
});
