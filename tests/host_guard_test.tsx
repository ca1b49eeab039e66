/**
 * @module
 * The host guard (lib/server/guard.ts) over raw HTTP: a `Host` header that is more than a host and
 * a port — Deno writes it into `req.url` as sent — never chooses the path the app routes on.
 */
import assert from "node:assert/strict";
import { memoryApp } from "./helpers/app.ts";
import { requestBytes, send } from "./reliability/raw_http.ts";

Deno.test("a Host with a path, a query or a fragment in it gets 400, with or without allowedHosts", async () => {
  await using kv = await Deno.openKv(":memory:");
  // Bound first, on a port the system picks (none another process can take meanwhile); each app,
  // which needs its origin, made for that port.
  let app: ReturnType<typeof memoryApp> | undefined;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req, info) => app!.fetch(req, info),
  );
  const { port } = server.addr;
  const host = `127.0.0.1:${port}`;
  const routes = {
    "x.tsx": { default: () => <p>the page at /x</p> },
    "admin/x.tsx": { default: () => <p>the page at /admin/x</p> },
  };
  for (const origins of [[`http://${host}`], undefined]) {
    app = memoryApp({ routes }, { kv, origins });
    try {
      const ok = await send(port, requestBytes(port, { target: "/x" }));
      assert.equal(ok.status, 200);
      assert.match(ok.body, /the page at \/x/);
      // `Host: h/admin` passed the list of hosts (read up to the `/`) and made `/x` `/admin/x`.
      for (
        const given of [`${host}/admin`, `${host}/admin/..`, `${host}#`, `${host}?a=`, `${host}\\a`]
      ) {
        const res = await send(port, requestBytes(port, { target: "/x", host: given }));
        const name = `Host: ${given}, ${origins ? "hosts listed" : "no list"}`;
        assert.equal(res.status, 400, name);
        assert.doesNotMatch(res.body, /the page at/, name);
      }
    } finally {
      await app.close();
    }
  }
});

Deno.test("allowedHosts adds to the origins' hosts: the public host, and the page cache's own renders, still answered", async () => {
  await using kv = await Deno.openKv(":memory:");
  const app = memoryApp({
    routes: { "x.tsx": { cache: { maxAge: 60 }, default: () => <p>the page at /x</p> } },
  }, { kv, origins: ["https://app.example"], allowedHosts: ["127.0.0.1:8000"] });
  try {
    for (const host of ["app.example", "127.0.0.1:8000"]) {
      const res = await app.request(`http://${host}/x`);
      assert.equal(res.status, 200, host);
      assert.match(await res.text(), /the page at \/x/);
    }
    // The cache renders the page on the origin's URL: refused by the guard, it was a 400.
    const again = await app.request("http://127.0.0.1:8000/x");
    assert.equal(again.headers.get("x-cache"), "HIT");
    await again.body?.cancel();
    assert.equal((await app.request("http://evil.example/x")).status, 400);
  } finally {
    await app.close();
  }
});

Deno.test("in dev, ALLOWED_HOSTS adds a name to localhost and IP addresses, as the dev server's front does", async () => {
  await using kv = await Deno.openKv(":memory:");
  const routes = { "x.tsx": { default: () => <p>the page at /x</p> } };
  // docs/dev.md: reaching `deno task dev` as mybox.lan:8000 takes ALLOWED_HOSTS=mybox.lan:8000;
  // the app's server under it (dev) answered that name alone, and localhost:8000 got its 400.
  const dev = memoryApp({ routes }, { kv, dev: true, allowedHosts: ["mybox.lan:8000"] });
  try {
    for (const host of ["mybox.lan:8000", "localhost:8000", "127.0.0.1:8000", "[::1]:8000"]) {
      const res = await dev.request(`http://${host}/x`);
      assert.equal(res.status, 200, host);
      assert.match(await res.text(), /the page at \/x/);
    }
    for (const host of ["evil.example:8000", "mybox.lan:9000", "localhost.evil.example:8000"]) {
      assert.equal((await dev.request(`http://${host}/x`)).status, 400, host);
    }
  } finally {
    await dev.close();
  }
  // In production the list is the list: loopback names are not added.
  const production = memoryApp({ routes }, { kv, allowedHosts: ["mybox.lan:8000"] });
  try {
    assert.equal((await production.request("http://localhost:8000/x")).status, 400);
  } finally {
    await production.close();
  }
});
