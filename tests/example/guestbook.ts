/**
 * @module
 * The example's guestbook over HTTP, as a browser would use it: the form's action and hidden fields
 * read from the rendered page, a signing posted like a form with JavaScript off or called like the
 * island does (the entries' event stream: `readEvents`, the framework tests' own). The example's servers: the project
 * itself, never the framework's test app.
 */
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { workerNamingProject } from "../helpers/parallel.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

export { readEvents } from "../helpers/events.ts";

/** The example app served as `deno task start` serves it (`deno task test` built it). */
export function startExample(env: Record<string, string> = {}): Promise<TestServer> {
  return startServer(env, { root: PROJECT_ROOT });
}

/** A built copy of the example whose responses name their worker (`X-Worker`). */
export function workerNamingExample(): Promise<string> {
  return workerNamingProject(PROJECT_ROOT);
}

export interface SignOptions {
  /** Extra request headers (`X-Forwarded-For`, …). */
  headers?: Record<string, string>;
  /** A connection pool of its own (`Deno.createHttpClient`). */
  client?: Deno.HttpClient;
}

export interface GuestbookForm {
  /** `/_action/…` */
  action: string;
  /** The form's hidden fields (React's action reference, the bound state). */
  fields: [string, string][];
}

/** The form `/guestbook` renders: where it posts, and its hidden fields. */
export async function guestbookForm(origin: string): Promise<GuestbookForm> {
  const html = await (await fetch(origin + "/guestbook")).text();
  const form = /<form[^>]*action="(\/_action\/[^"]+)"[^>]*>(.*?)<\/form>/s.exec(html);
  if (!form) throw new Error("the guestbook renders no form posting to an action");
  const fields = [...form[2].matchAll(/<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g)]
    .map(([, name, value = ""]) =>
      [name, value.replaceAll("&quot;", '"').replaceAll("&amp;", "&")] as [string, string]
    );
  return { action: form[1], fields };
}

/** Posts the form as a browser does with JavaScript off (multipart, `Accept: text/html`). */
export function signWithoutScript(
  origin: string,
  form: GuestbookForm,
  signing: { name: string; message: string },
  { headers = {}, client }: SignOptions = {},
): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of form.fields) body.append(name, value);
  // Each post a submission of its own, as from a new render: tests post one form many times.
  body.set("$ACTION_ONCE", crypto.randomUUID());
  body.set("name", signing.name);
  body.set("message", signing.message);
  return fetch(origin + form.action, {
    method: "POST",
    body,
    redirect: "manual",
    client,
    headers: {
      Origin: origin,
      Referer: origin + "/guestbook",
      Accept: "text/html,application/xhtml+xml,*/*;q=0.8",
      ...headers,
    },
  });
}

/** Calls the action as the island's stub does (`fetch`, `Accept: *\/*`, devalue arguments). */
export function signAsIsland(
  origin: string,
  form: GuestbookForm,
  signing: { name: string; message: string },
  { headers = {}, client }: SignOptions = {},
): Promise<Response> {
  const fields = new FormData();
  fields.set("name", signing.name);
  fields.set("message", signing.message);
  return fetch(origin + form.action, {
    method: "POST",
    body: encodeCall([{}, fields]),
    client,
    headers: { Origin: origin, Accept: "application/json", ...headers },
  });
}
