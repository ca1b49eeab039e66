/**
 * @module
 * The hidden `$ACTION_UNKEPT` marks the server renders before fields never kept, in Chromium, on a
 * copy of the test app: a form posted without JavaScript to a removed action keeps none of them in
 * the form-state cookie - a password under a plain name, a field posted with its
 * form by a `form` attribute from outside it; and an island whose root holds such a field hydrates
 * onto the field itself, not onto the mark before it.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { hydrated, launchBrowser, pageErrors } from "../helpers/browser.ts";
import { builtCopy } from "../helpers/built_copy.ts";
import { startServer } from "../helpers/server.ts";

const FILES = {
  "islands/OneTimeCode.tsx": `import { useState } from "react";

/** A field never kept at the island's root, with what React saw typed into it. */
export default function OneTimeCode() {
  const [typed, setTyped] = useState("");
  return (
    <>
      <input name="code" aria-label="Code" autoComplete="one-time-code"
        onChange={(event) => setTyped(event.target.value)} />
      <output id="typed">{typed}</output>
    </>
  );
}
`,
  "routes/unkept.tsx": `import OneTimeCode from "../islands/OneTimeCode.tsx";

export default function Page() {
  return (
    <main>
      <form id="pay" method="post" action="/_action/RemovedByTheLastDeploy">
        <input name="note" aria-label="Note" />
        <input type="password" name="login_key" aria-label="Login key" />
        <button>Pay</button>
      </form>
      <input name="account" aria-label="Account" data-app-keep="off" form="pay" />
      <OneTimeCode />
    </main>
  );
}
`,
};

Deno.test("marks of fields never kept: the cookie without JavaScript, and an island's hydration", async (t) => {
  const root = await builtCopy("unkept-fields", FILES);
  await using server = await startServer({}, { root });
  await using browser = await launchBrowser();

  await t.step("a form posted without JavaScript keeps none of them in the cookie", async () => {
    const page = await (await browser.newContext({ javaScriptEnabled: false })).newPage();
    await page.goto(`${server.origin}/unkept`);
    await page.getByLabel("Note").fill("typed-note");
    await page.getByLabel("Login key").fill("typed-login-key");
    await page.getByLabel("Account").fill("typed-account");
    const posted = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Pay" }).click();
    const cookie = (await (await posted).headersArray())
      .find((header) => header.name.toLowerCase() === "set-cookie")?.value;
    assert.ok(cookie, "a form-state cookie");
    const payload = Buffer.from(cookie.split("=")[1].split(".")[0], "base64url").toString();
    assert.ok(payload.includes("typed-note"), `the plain field rides along: ${payload}`);
    assert.ok(!payload.includes("typed-login-key"), `no password: ${payload}`);
    assert.ok(!payload.includes("typed-account"), `no field of the form outside it: ${payload}`);
  });

  await t.step("an island whose root holds such a field hydrates onto the field", async () => {
    const page = await (await browser.newContext()).newPage();
    const errors = pageErrors(page);
    await page.goto(`${server.origin}/unkept`);
    await hydrated(page);
    await page.getByLabel("Code").pressSequentially("123456");
    await page.waitForFunction(() => document.getElementById("typed")?.textContent === "123456");
    assert.deepEqual(errors, []);
  });
});
