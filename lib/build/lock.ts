/**
 * @module
 * One build of a project at a time. Two at once (two `deno task build`s, a start building what is
 * missing beside a build, CI runs on one checkout) write the same files in `_build/` - esbuild's
 * chunks, then their debug IDs and compressed copies, the manifest the server's bundle is made
 * from - and one read what the other was half-way through writing: a build failed, or left a
 * bundle its fingerprint did not describe. A build holds an exclusive lock on `_build/build.lock`
 * while it runs, another waits for it. The lock is the system's (`flock`): it goes with the
 * process that held it, however that ends, so no lock is ever left stale.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";

/** Development builds too: both write `_build/css/`. */
const LOCK_FILE = "_build/build.lock";

/** Runs `work` holding the project's build lock, once any other build has let it go. */
export async function withBuildLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  await mkdir(join(root, "_build"), { recursive: true });
  // Closing the file lets the lock go.
  using file = await Deno.open(join(root, LOCK_FILE), { create: true, write: true });
  await file.lock(true);
  return await work();
}
