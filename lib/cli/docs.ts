/**
 * @module
 * `deno task docs`: the API reference from the entry points' JSDoc - `docs/reference.md`, the
 * index that is committed, and the HTML reference in `_build/reference/` (`build/reference.ts`).
 */
import { HTML_DIR, INDEX_FILE, writeReference } from "../build/reference.ts";
import { PROJECT_ROOT } from "./root.ts";

await writeReference(PROJECT_ROOT);
console.log(`Wrote ${INDEX_FILE} and ${HTML_DIR}/index.html`);
