/**
 * No credentials in what the browser SDK sends: a page opened with secrets in its URL, its
 * referrer, its cookies (named like secrets or not) and a fetch's URL, whose island then fails. Neither the browser's error
 * event and pageload transaction nor the server's transactions for those requests carry a secret;
 * the page's own, non-secret parameter still arrives, and the one `SENTRY_SCRUB_FIELDS` names does
 * not.
 */
import assert from "node:assert/strict";
import { launchBrowser } from "../helpers/browser.ts";
import { fixtureProject } from "../helpers/fixtures.ts";
import { isErrorEvent, isTransaction, startSentryReceiver } from "shell/testing";
import { startServer } from "../helpers/server.ts";

const SECRETS = ["t0k", "p4ss", "j3wt", "s3cr3t", "f3tch", "dark", "s1dv4l", "f0rmst4te"];

Deno.test("sentry (browser): no credentials in any event or transaction", async () => {
  const root = await fixtureProject();
  await using receiver = startSentryReceiver();
  await using server = await startServer(
    { SENTRY_DSN: receiver.dsn, SENTRY_TRACES_SAMPLE_RATE: "1", SENTRY_SCRUB_FIELDS: "theme" },
    { root },
  );
  await using browser = await launchBrowser();
  const context = await browser.newContext();
  // Session cookies whatever their names: no cookie's value is sent (issue 22).
  await context.addCookies([
    { name: "session", value: "s3cr3t", url: server.origin },
    { name: "sid", value: "s1dv4l", url: server.origin },
    { name: "app-form-state", value: "f0rmst4te", url: server.origin },
  ]);
  const tab = await context.newPage();

  const path = "/island/click";
  await tab.goto(`${server.origin}${path}?token=t0k&page=2&theme=dark&password=p4ss`, {
    referer: `${server.origin}/about?jwt=j3wt`,
  });
  // The SDK is up once the pageload is sent: the fetch after it leaves a breadcrumb.
  const pageload = await receiver.waitFor((i) =>
    isTransaction(i) && i.payload.transaction === path && i.payload.contexts.trace.op === "pageload"
  );
  await tab.evaluate(() => fetch("/api/time?access_token=f3tch&page=2").then((r) => r.text()));
  await tab.getByRole("button", { name: "Clicked 0" }).click();
  const event = await receiver.waitFor((i) =>
    isErrorEvent(i) && i.payload.exception.values[0].value === "click handler failure"
  );
  await receiver.waitFor((i) => isTransaction(i) && i.payload.transaction === "GET /api/time");
  await server.stop(); // the server's SDK flushes on the way out

  const bodies = receiver.bodies.join("\n");
  for (const secret of SECRETS) assert.ok(!bodies.includes(secret), `${secret} was sent`);

  for (const { payload } of [event, pageload]) {
    const { url, headers } = payload.request;
    const query = "token=[Filtered]&page=2&theme=[Filtered]&password=[Filtered]";
    assert.equal(url, `${server.origin}${path}?${query}`);
    assert.equal(headers.Referer, `${server.origin}/about?jwt=[Filtered]`);
  }
  const fetched = event.payload.breadcrumbs.find((b: { category: string }) =>
    b.category === "fetch"
  );
  assert.equal(fetched?.data.url, "/api/time?access_token=[Filtered]&page=2");
});
