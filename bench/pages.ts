/**
 * @module
 * The pages the benchmarks and the reliability tests look at: the three SSR pages compared with
 * the bare server (URL path → route file), and every example page — the home page and each page
 * it links to, read from a running server so a newly added example is covered with no edit here.
 */
export const SSR_PAGES: Record<string, string> = {
  "/list": "list.tsx",
  "/counter": "counter.tsx",
  "/streaming": "streaming.tsx",
};

/** Examples behind sign-in: not for load, which would only measure the redirect to `/login`. */
export const GUARDED_PATHS = ["/account", "/admin"];

/** `/` and every same-origin path the home page links to, in order, but the guarded ones. */
export async function examplePaths(origin: string): Promise<string[]> {
  const html = await (await fetch(origin + "/")).text();
  const links = [...html.matchAll(/<a\b[^>]*\bhref="(\/[^"]*)"/g)].map(([, href]) => href);
  return [...new Set(["/", ...links])].filter((path) => !GUARDED_PATHS.includes(path));
}

/** The example paths that answer with an HTML page (not JSON, say). */
export async function examplePages(origin: string): Promise<string[]> {
  const pages: string[] = [];
  for (const path of await examplePaths(origin)) {
    const res = await fetch(origin + path);
    await res.body?.cancel();
    if (res.headers.get("content-type")?.startsWith("text/html")) pages.push(path);
  }
  return pages;
}
