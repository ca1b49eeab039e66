/**
 * @module
 * The KV store the settings name (`KV_PATH`), opened for an entry point: a relative path is taken
 * from the project root, so the store is the same whichever folder the server starts from. A store
 * that cannot be used stops the start with a message naming the path and the cause, and exit 1.
 */
import { isAbsolute, join } from "node:path";
import { openStore, StoreOpenError } from "../kv/store.ts";
import { PROJECT_ROOT } from "./root.ts";

/** The path `openStore` gets for `kvPath` (undefined: Deno Deploy's managed KV). */
export function storePath(kvPath: string | undefined): string | undefined {
  if (kvPath === undefined || kvPath === ":memory:" || isAbsolute(kvPath)) return kvPath;
  return join(PROJECT_ROOT, kvPath);
}

export async function storeOrExit(kvPath: string | undefined): Promise<Deno.Kv> {
  try {
    return await openStore(storePath(kvPath));
  } catch (error) {
    if (!(error instanceof StoreOpenError)) throw error;
    console.error(error.message);
    Deno.exit(1);
  }
}
