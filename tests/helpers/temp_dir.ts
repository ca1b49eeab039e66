/**
 * @module
 * Temp folders that go with the scope that made them: `await using dir = await tempDir()` removes
 * the folder and all it holds on the way out, passed or failed, so that runs of the suite do not
 * pile up in /tmp (CI's and every local run share it).
 */

export interface TempDir extends AsyncDisposable {
  path: string;
}

/** A fresh folder in the system's temp folder, named `prefix` and a random part. */
export async function tempDir(prefix = "test-"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true });
    },
  };
}
