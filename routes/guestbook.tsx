import Guestbook from "@/islands/Guestbook.tsx";
import { useSettings } from "shell";
import { currentUser } from "shell/auth";
import { kvOf } from "shell/data";
import { latestEntries } from "./_guestbook/entries.ts";
import type { Entry } from "./_guestbook/types.ts";
import { define } from "./_define.ts";
import settings from "./_settings.ts";

const route = define.route("guestbook.tsx");

export const handler = route.handlers<{ entries: Entry[]; signingAs?: string }>({
  async GET(_req, ctx) {
    const shown = settings(ctx).GUESTBOOK_SHOWN; // a number: checked when the app started
    const [entries, user] = await Promise.all([latestEntries(kvOf(ctx), shown), currentUser(ctx)]);
    return ctx.render({ entries, signingAs: user?.name });
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
    {/* A page reads the settings too: typed, without its handler passing them down. */}
    <Guestbook
      entries={data.entries}
      shown={useSettings(settings).GUESTBOOK_SHOWN}
      signingAs={data.signingAs}
    />
  </>
));
