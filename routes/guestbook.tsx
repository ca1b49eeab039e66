import Guestbook from "@/islands/Guestbook.tsx";
import { defineRoute } from "shell";
import { kvOf } from "shell/data";
import { latestEntries } from "./_guestbook/entries.ts";
import type { Entry } from "./_guestbook/types.ts";

const route = defineRoute("guestbook.tsx");

export const handler = route.handlers<{ entries: Entry[] }>({
  async GET(_req, ctx) {
    return ctx.render({ entries: await latestEntries(kvOf(ctx)) });
  },
});

export default route.page<typeof handler>(({ data }) => (
  <>
    <title>Server actions</title>
    <h1>A guestbook</h1>
    <p>
      The form calls a server action that checks the entry with a schema, and the entries live in
      Deno KV: they survive restarts, and a page left open shows new ones as they are signed. Try it
      with JavaScript turned off: the browser posts the form and comes back here, errors included.
    </p>
    <Guestbook entries={data.entries} />
  </>
));
