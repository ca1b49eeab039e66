/**
 * @module
 * The example's guestbook over HTTP, as a browser would use it: the form's action and hidden fields
 * read from the rendered page, a signing posted like a form with JavaScript off or called like the
 * island does, and the entries' event stream read as it comes. The example's servers: the project
 * itself, never the framework's test app.
 */
import { Arrivals } from "../../lib/testing/arrivals.ts";
import { encodeCall } from "../../lib/shared/action_wire.ts";
import { workerNamingProject } from "../helpers/parallel.ts";
import { PROJECT_ROOT } from "../helpers/project_copy.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

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

export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

/** An open event stream: its events as they arrive, and a way to wait for a number of them. */
export interface EventReader extends AsyncDisposable {
  response: Response;
  events: ServerSentEvent[];
  /** Raw text received so far (comments and `retry:` included). */
  text(): string;
  /** Resolves once `count` events have arrived; rejects after `ms`. */
  waitFor(count: number, ms?: number): Promise<ServerSentEvent[]>;
  close(): Promise<void>;
}

/** Opens the event stream at `url`; `client`: a connection pool of its own (`Deno.HttpClient`). */
export async function readEvents(
  url: string,
  headers: HeadersInit = {},
  client?: Deno.HttpClient,
): Promise<EventReader> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal, client });
  const events: ServerSentEvent[] = [];
  let raw = "";
  let pending = "";
  const arrivals = new Arrivals();
  const reading = (async () => {
    try {
      for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
        raw += chunk;
        pending += chunk;
        let end;
        while ((end = pending.indexOf("\n\n")) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event: ServerSentEvent = { data: "" };
          const data: string[] = [];
          for (const line of block.split("\n")) {
            const [field, ...rest] = line.split(": ");
            if (field === "id") event.id = rest.join(": ");
            else if (field === "event") event.event = rest.join(": ");
            else if (field === "data") data.push(rest.join(": "));
          }
          if (data.length) events.push({ ...event, data: data.join("\n") });
        }
        arrivals.arrived();
      }
    } catch { /* aborted */ }
    arrivals.arrived();
  })();
  const close = async () => {
    controller.abort();
    await reading;
  };
  return {
    response,
    events,
    text: () => raw,
    waitFor: (count, ms = 5_000) =>
      arrivals.until(
        () => events.length >= count ? events.slice(0, count) : undefined,
        ms,
        () => `${events.length} of ${count} events in ${ms} ms:\n${raw}`,
      ),
    close,
    [Symbol.asyncDispose]: close,
  };
}
