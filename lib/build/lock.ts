/**
 * @module
 * One build of a project at a time. Two at once (two `deno task build`s, a start building what is
 * missing beside a build, CI runs on one checkout) write the same files in `_build/` - esbuild's
 * chunks, then their debug IDs and compressed copies, the manifest the server's bundle is made
 * from - and one read what the other was half-way through writing: a build failed, or left a
 * bundle its fingerprint did not describe. A build holds an exclusive lock on `_build/build.lock`
 * while it runs, another waits for it. The lock is the system's (`flock`): it goes with the
 * process that held it, however that ends, so no lock is ever left stale. The holder writes its
 * process id into the file, so that a build kept waiting - behind a hung one - says which it waits
 * for.
 */
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** Development builds too: both write `_build/css/`. */
const LOCK_FILE = "_build/build.lock";

/** A build waits this long before it says that another holds the lock: builds take seconds. */
const QUIET_MS = 3_000;

/** Runs `work` holding the project's build lock, once any other build has let it go. */
export async function withBuildLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  await mkdir(join(root, "_build"), { recursive: true });
  const path = join(root, LOCK_FILE);
  // Closing the file lets the lock go.
  using file = await Deno.open(path, { create: true, write: true });
  const locked = file.lock(true);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise((resolve) => timer = setTimeout(resolve, QUIET_MS, "waited"));
  if (await Promise.race([locked, waited]).finally(() => clearTimeout(timer)) === "waited") {
    const holder = (await readFile(path, "utf8").catch(() => "")).trim();
    console.error(
      `Waiting for another build of this project${holder ? ` (process ${holder})` : ""}, ` +
        `which holds ${LOCK_FILE}`,
    );
  }
  await locked;
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  return await work();
}
