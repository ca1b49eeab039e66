/**
 * @module
 * The bench's limit renders the same page as the framework (issue 29: "a bare server rendering the
 * same page with the same React"): `bench/bare.ts` and `deno task start`'s server, in one built copy
 * of the test app, send the same HTML for every SSR page the bench loads, but for the nonce. The
 * copy's `_app` links a stylesheet and its island a CSS module, so the page's stylesheets, the
 * island's, the build's `<meta>` and the speculation rules are all in what is compared.
 */
import assert from "node:assert/strict";
import { builtCopy } from "../helpers/built_copy.ts";
import { pagesOfBoth } from "../helpers/limit.ts";

const bench = (file: string) => Deno.readTextFile(new URL(`../../bench/${file}`, import.meta.url));

const FILES: Record<string, string> = {
  "bench/bare.ts": await bench("bare.ts"),
  "bench/pages.ts": await bench("pages.ts"),
  "routes/limit.css": "body { margin: 0; }\n",
  "routes/_app.tsx": `import type { AppProps } from "shell";
import "./limit.css";

export default function App({ Component }: AppProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      <body>
        <Component />
      </body>
    </html>
  );
}
`,
  "components/Card.module.css": ".card { padding: 1px; }\n",
  "components/Card.tsx": `import type { ReactNode } from "react";
import styles from "./Card.module.css";

export function Card({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <section className={styles.card}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}
`,
};

Deno.test("the bench's limit sends the framework's page, byte for byte but the nonce", async () => {
  const root = await builtCopy("bench-limit", FILES);
  const pairs = await pagesOfBoth(root);
  const counter = pairs.find((pair) => pair.path === "/counter")!;
  // What the limit once left out (each would make the documents differ), all on the page.
  for (const part of ['rel="stylesheet"', 'type="speculationrules"', 'name="app-build"']) {
    assert.ok(counter.framework.includes(part), `the page carries ${part}`);
  }
  assert.equal(counter.framework.match(/rel="stylesheet"/g)?.length, 2, "_app's and the island's");
  for (const { path, framework, limit } of pairs) assert.equal(limit, framework, path);
});
