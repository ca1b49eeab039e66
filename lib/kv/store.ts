/**
 * @module
 * Opening the app's Deno KV store: a SQLite file (its folder created), `":memory:"` for tests, or
 * - with no path - Deno Deploy's managed KV. A store that cannot be used fails here, at start-up,
 * with a {@link StoreOpenError} naming the path and the cause, rather than on the first request.
 * Handles opening a new file at once (`deno serve --parallel` workers on a fresh `.data/`) can be
 * told "database is locked" while another sets it up: those are tried again, within the deadline.
 * Which path to use is the entry points' decision (`cli/settings.ts`): this module reads no
 * environment.
 */

/** Why the store could not be opened; the message is for the operator. */
export class StoreOpenError extends Error {
  override name = "StoreOpenError";
  constructor(readonly path: string | undefined, readonly reason: string, options?: ErrorOptions) {
    super(
      `Cannot use the KV store ${path === undefined ? "(managed)" : `at ${path}`}: ${reason}`,
      options,
    );
  }
}

export interface StoreOptions {
  /** How long opening and the write probe may take, in ms. */
  timeoutMs?: number;
}

const PROBE_KEY = ["_store", "opened"];

/**
 * Opens the store at `path` (`undefined`: Deno Deploy's managed KV) and, a file, proves it can be
 * written to; throws {@link StoreOpenError} otherwise.
 */
export async function openStore(
  path: string | undefined,
  { timeoutMs = 10_000 }: StoreOptions = {},
): Promise<Deno.Kv> {
  if (path === "") throw new StoreOpenError(path, "the path is empty");
  const file = path !== undefined && path !== ":memory:";
  if (file) await prepareFolder(path);
  // Past the deadline nothing starts again: the caller has its answer.
  let late = false;
  try {
    // Opening and probing run under one deadline: a read-only file opens and only refuses writes,
    // and on a file another process keeps write-locked the first write waits as long as the lock.
    // (Memory and Deploy's managed KV have neither: a write there would only cost.)
    const work = (async () => {
      for (let attempt = 0;; attempt++) {
        try {
          return await openAndProbe(path, file);
        } catch (error) {
          if (!file || late || attempt + 1 >= OPEN_ATTEMPTS || !BUSY.test(describe(error))) {
            throw error;
          }
          // Another handle is creating the file or holds the lock a moment: after it, it opens.
          await new Promise((resolve) => setTimeout(resolve, backoff(attempt)));
        }
      }
    })();
    return await deadline(work, timeoutMs, () => {
      late = true;
      // Not closed now: `close()` on a blocked handle blocks the thread until the lock goes.
      work.then((kv) => kv.close(), () => {});
    });
  } catch (error) {
    throw new StoreOpenError(path, file ? await diagnose(path, error) : describe(error), {
      cause: error,
    });
  }
}

/**
 * SQLite's "database is locked": on a file that is new, every handle opening it at once (two
 * `deno serve --parallel` workers on a fresh `.data/`) sets up its tables, and one can be refused
 * at once instead of waiting its turn. Tried again, it finds them made.
 */
const BUSY = /database is locked|database is busy/;
/** Attempts at opening a file SQLite calls busy; the deadline bounds them too. */
const OPEN_ATTEMPTS = 8;

/** 10, 20, 40 ... ms, at most 320, jittered so that racing handles spread out. */
function backoff(attempt: number): number {
  return Math.min(10 * 2 ** attempt, 320) * (0.5 + Math.random());
}

async function openAndProbe(path: string | undefined, file: boolean): Promise<Deno.Kv> {
  const kv = await (path === undefined ? Deno.openKv() : Deno.openKv(path));
  if (!file) return kv;
  try {
    await kv.set(PROBE_KEY, new Date());
    return kv;
  } catch (error) {
    kv.close();
    throw error;
  }
}

async function prepareFolder(path: string): Promise<void> {
  const slash = path.lastIndexOf("/");
  if (slash <= 0) return;
  const folder = path.slice(0, slash);
  try {
    await Deno.mkdir(folder, { recursive: true });
  } catch (error) {
    throw new StoreOpenError(path, `cannot create its folder ${folder}: ${describe(error)}`, {
      cause: error,
    });
  }
}

/** Turns SQLite's terse messages into a cause an operator can act on. */
async function diagnose(path: string, error: unknown): Promise<string> {
  const message = describe(error);
  if (error instanceof DeadlineError) {
    return `${message}; is another process holding a lock on the file (sqlite3, a backup tool)?`;
  }
  if (/file is not a database|malformed/.test(message)) {
    return `the file is not a usable Deno KV (SQLite) database (${message}); ` +
      "move it away or restore a backup";
  }
  const stat = await Deno.stat(path).catch(() => undefined);
  if (stat?.isDirectory) return "it is a directory";
  if (/readonly|read-only|unable to open/.test(message)) {
    // The OS says why (permission, read-only file system, ...) where SQLite does not.
    try {
      (await Deno.open(path, { read: true, write: true, create: true })).close();
    } catch (osError) {
      return `${describe(osError)} (${message})`;
    }
    return `${message}; check that the file and its folder are writable ` +
      "(SQLite also creates -wal and -shm files beside it)";
  }
  return message;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

class DeadlineError extends Error {}

function deadline<T>(promise: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new DeadlineError(`no answer within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** How often `watchStoreFile` looks: a second of writes at most goes to a file nobody will read. */
const WATCH_MS = 1_000;

/**
 * Calls `gone` once if the store's file at `path` disappears or is replaced while it is open -
 * deleted by hand, or by a deploy that cleans `.data/`. SQLite keeps writing to the file it opened,
 * which nothing can open again: at the next start every write since would be lost, silently. The
 * caller makes it loud. A stat a second, on a timer that keeps no process alive.
 */
export async function watchStoreFile(path: string, gone: (why: string) => void): Promise<void> {
  const identity = (info: Deno.FileInfo) => `${info.dev}:${info.ino}`;
  const opened = identity(await Deno.stat(path));
  const timer = setInterval(async () => {
    const now = await Deno.stat(path).catch(() => undefined);
    if (now && identity(now) === opened) return;
    clearInterval(timer);
    gone(now ? `at ${path} was replaced by another file` : `at ${path} was deleted`);
  }, WATCH_MS);
  Deno.unrefTimer(timer);
}
