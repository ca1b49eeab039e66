/**
 * @module
 * The pages the benchmarks look at: the three SSR pages compared with the bare server (URL path →
 * route file), and every example page whose bytes to the browser are counted.
 */
export const SSR_PAGES: Record<string, string> = {
  "/list": "list.tsx",
  "/counter": "counter.tsx",
  "/streaming": "streaming.tsx",
};

export const EXAMPLE_PAGES = [
  "/",
  "/list",
  "/counter",
  "/streaming",
  "/blog/hello-world",
  "/docs/getting/started",
  "/about",
];
