/**
 * @module
 * A cached page: rendered once and served to everyone from the shared page cache (memory, then
 * Deno KV on every worker and instance) for five minutes, then stale for an hour while one render
 * in the background replaces it. Publishing a headline drops it everywhere at once
 * (`revalidateTag("headline")` in `_headline/actions.ts`). docs/caching.md says what is never
 * cached (signed-in visitors, for one) and why `APP_ORIGIN` must be set.
 */
import type { CachePolicy } from "shell";
import { kvOf } from "shell/data";
import { publish } from "./_headline/actions.ts";
import { FIRST_HEADLINE, HEADLINE_KEY } from "./_headline/headline.ts";
import { define } from "./_define.ts";

export const cache: CachePolicy = { maxAge: 300, staleWhileRevalidate: 3600, tags: ["headline"] };

interface Headline {
  text: string;
  renderedAt: string;
}

export const handler = define.route("headline.tsx").handlers<Headline>({
  async GET(_req, ctx) {
    const { value } = await kvOf(ctx).get<string>(HEADLINE_KEY);
    return ctx.render({ text: value ?? FIRST_HEADLINE, renderedAt: new Date().toISOString() });
  },
});

export default define.route("headline.tsx").page<typeof handler>(({ data }) => (
  <>
    <title>A cached page</title>
    <h1>{data.text}</h1>
    <p>
      Rendered at{" "}
      <time dateTime={data.renderedAt}>{data.renderedAt}</time>: reload, and the time stays — the
      page comes from the cache (its response says <code>X-Cache: HIT</code>).
    </p>
    <form action={publish}>
      <label>
        New headline <input name="headline" required maxLength={120} />
      </label>
      <button type="submit">Publish</button>
    </form>
  </>
));
