/**
 * @module
 * The test app's wall over HTTP, as browsers use it: its form posted with JavaScript off (the test
 * kit's `submit`, hidden fields and all) and its server action called as the island's stub calls
 * it, answers left raw for the tests of refusals (statuses, `Retry-After`).
 */
import { TestClient } from "shell/testing";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { fillForm } from "../../lib/testing/form.ts";

export interface PostOptions {
  /** Extra request headers (`X-Forwarded-For`, …). */
  headers?: Record<string, string>;
  /** A connection pool of its own (`Deno.createHttpClient`). */
  client?: Deno.HttpClient;
}

export interface Posting {
  name: string;
  message: string;
}

/** Posts the wall's form as a browser does with JavaScript off; the answer as it came. */
export function postWithoutScript(
  origin: string,
  posting: Posting,
  { headers, client }: PostOptions = {},
): Promise<Response> {
  const browser = new TestClient(origin, { httpClient: client });
  return browser.submit("/wall", { fields: { ...posting }, headers });
}

/** Where the wall's form posts: its action's URL, read from the page. */
export async function wallAction(origin: string): Promise<string> {
  const html = await (await fetch(origin + "/wall")).text();
  return new URL((await fillForm(html, origin + "/wall", undefined, {})).url).pathname;
}

/** Calls the wall's action (`action`, its URL) as the island's stub does: the raw answer. */
export function postAsIsland(
  origin: string,
  action: string,
  posting: Posting,
  { headers = {}, client }: PostOptions = {},
): Promise<Response> {
  const fields = new FormData();
  fields.set("name", posting.name);
  fields.set("message", posting.message);
  return fetch(origin + action, {
    method: "POST",
    body: encodeCall([{}, fields]),
    client,
    headers: { Origin: origin, Accept: "application/json", ...headers },
  });
}
