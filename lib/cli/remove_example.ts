/**
 * @module
 * `deno task example:remove`: a clean start. Removes the example app - its routes, islands, static
 * files and tests, every path `tests/example/files.json` lists (the list lives with the example,
 * and a test there keeps it complete) - and leaves a minimal app: the document
 * (`routes/_app.tsx`), its icon (`static/favicon.svg`: a page that names none has Chromium ask for
 * `/favicon.ico`, a 404 in the console of a team's first page), a home page and the not-found
 * page. `deno.json` keeps no entry for a stylesheet it removed (the build's, see
 * `lib/build/styles/deno_json.ts`), so the tree is consistent before the next build. Run it first,
 * on a fresh clone: the files it writes replace whatever is there. Run again, it finds no list and
 * says so. See docs/start.md.
 */
import { parse } from "jsonc-parser";
import { dirname, isAbsolute, join } from "node:path";
import { withEntries } from "../build/styles/deno_json.ts";
import { MODULES_DIR } from "../build/styles/plan.ts";
import { PROJECT_ROOT } from "./root.ts";

/** Where the example's list lives, from the project root. */
export const EXAMPLE_LIST = "tests/example/files.json";

/** The minimal app left in the example's place, by path. */
export const MINIMAL_APP: Record<string, string> = {
  "routes/_app.tsx": `import type { AppProps } from "shell";

/** The document every page renders in. */
export default function App({ Component }: AppProps) {
  return (
    <html lang="en">
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
      </head>
      <body>
        <Component />
      </body>
    </html>
  );
}
`,
  "static/favicon.svg": `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
  <rect width="32" height="32" rx="6" fill="#334155" />
</svg>
`,
  "routes/index.tsx": `export default function Home() {
  return (
    <>
      <title>Home</title>
      <h1>Home</h1>
      <p>This page is routes/index.tsx. docs/start.md says what to add next.</p>
    </>
  );
}
`,
  "routes/_404.tsx": `import type { ErrorPageProps } from "shell";

export default function NotFound({ url, message }: ErrorPageProps) {
  // An unknown URL says "Not Found"; the product's httpError(404, message) says what is gone.
  const what = message === "Not Found" ? \`Nothing lives at \${url.pathname}.\` : message;
  return (
    <>
      <title>Not found</title>
      <h1>Not found</h1>
      <p>
        {what} <a href="/">Home</a>
      </p>
    </>
  );
}
`,
};

/** The example's paths (a folder ends with `/`), checked to stay inside the project. */
export async function exampleFiles(root: string): Promise<string[] | undefined> {
  let text;
  try {
    text = await Deno.readTextFile(join(root, EXAMPLE_LIST));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const { files } = JSON.parse(text) as { files: string[] };
  for (const file of files) {
    if (isAbsolute(file) || file.split("/").some((part) => part === ".." || part === ".")) {
      throw new Error(`${EXAMPLE_LIST}: ${file} is not a path inside the project`);
    }
  }
  return files;
}

/** Removes the example below `root` and writes the minimal app; what it did, line by line. */
export async function removeExample(root: string): Promise<string[]> {
  const files = await exampleFiles(root);
  if (!files) return [`Nothing to remove: ${EXAMPLE_LIST} is gone, and the example with it.`];
  const done: string[] = [];
  const folders = new Set<string>();
  for (const file of files) {
    try {
      await Deno.remove(join(root, file), { recursive: true });
      done.push(`removed ${file}`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    for (let dir = dirname(file.replace(/\/$/, "")); dir !== "."; dir = dirname(dir)) {
      folders.add(dir);
    }
  }
  // Folders the example leaves empty go too, deepest first; `routes/` stays for the minimal app.
  for (const dir of [...folders].sort((a, b) => b.length - a.length)) {
    await Deno.remove(join(root, dir)).then(() => done.push(`removed ${dir}/`), () => {});
  }
  for (const [path, source] of Object.entries(MINIMAL_APP)) {
    await Deno.mkdir(join(root, dirname(path)), { recursive: true });
    await Deno.writeTextFile(join(root, path), source);
    done.push(`wrote ${path}`);
  }
  const dropped = await dropStyleEntries(root);
  if (dropped.length) {
    done.push(`deno.json: dropped the entries of stylesheets it removed: ${dropped.join(", ")}`);
  }
  return done;
}

/**
 * Drops `deno.json`'s entries for stylesheets that are gone (as the next build would); the keys
 * dropped. The build owns the entries that point into `_build/css/`; the rest stays as it is.
 */
async function dropStyleEntries(root: string): Promise<string[]> {
  const config = join(root, "deno.json");
  const text = await Deno.readTextFile(config);
  const imports: Record<string, unknown> = parse(text)?.imports ?? {};
  const kept = new Map<string, string>();
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(imports)) {
    if (typeof value !== "string" || !value.startsWith(`./${MODULES_DIR}/`)) continue;
    const sheet = value.slice(`./${MODULES_DIR}/`.length, -".ts".length);
    if (await Deno.stat(join(root, sheet)).then(() => true, () => false)) kept.set(key, sheet);
    else dropped.push(key);
  }
  if (dropped.length) await Deno.writeTextFile(config, withEntries(text, kept));
  return dropped;
}

if (import.meta.main) {
  for (const line of await removeExample(PROJECT_ROOT)) console.log(line);
  console.log("The example is gone. Next: docs/start.md, from \u201cYour first page\u201d.");
}
