/**
 * @module
 * Dev only: React Refresh's runtime, hooked into the page before React DOM evaluates (this is the
 * first import of `vendor.ts`), and the global `__REFRESH__` that the instrumented modules call
 * (see `build/dev/refresh.ts`):
 *
 *   function $RefreshReg$(type, name) { __REFRESH__.register(type, "<file> " + name) }
 *   function $RefreshSig$() { return __REFRESH__.sig("<file>") }
 *   __REFRESH__.evaluated("<file>", <the module's own namespace>[, <revision>])
 *
 * `evaluated` runs at the end of each evaluation of an instrumented file and records whether the
 * file can be swapped in place - every export a component (a "boundary"), and the same hooks in
 * the same order as its previous evaluation - for the dev client to decide between a hot update
 * and a reload. The revision, unused here, only makes a returning source's chunk new (see
 * `build/dev/refresh.ts`).
 */
import RefreshRuntime from "react-refresh/runtime";

RefreshRuntime.injectIntoGlobalHook(window);

export interface Evaluation {
  /** Every export looks like a component (React's own `isLikelyComponentType`). */
  boundary: boolean;
  /** The exports that are not components, for the console. */
  nonComponents: string[];
  /** Hook signatures differ from the file's previous evaluation (order, `// @refresh reset`). */
  signaturesChanged: boolean;
}

/** Signatures seen during the current evaluation of each file, in order. */
const pending = new Map<string, string[]>();
/** Signatures of the last completed evaluation of each file. */
const committed = new Map<string, string[]>();
/** Evaluations since the last `beginUpdate`. */
const evaluations = new Map<string, Evaluation>();

const refresh = {
  runtime: RefreshRuntime,
  register(type: unknown, id: string) {
    RefreshRuntime.register(type, id);
  },
  sig(file: string) {
    const inner = RefreshRuntime.createSignatureFunctionForTransform();
    return (
      type: unknown,
      key?: string,
      forceReset?: boolean,
      getCustomHooks?: () => unknown[],
    ) => {
      // Babel calls this once per component with its key (registration), then once per render
      // without: only the first counts.
      if (typeof key === "string") {
        const list = pending.get(file) ?? [];
        list.push(forceReset ? `${key}!reset` : key);
        pending.set(file, list);
      }
      return inner(type, key, forceReset, getCustomHooks);
    };
  },
  evaluated(file: string, exports: Record<string, unknown>) {
    const signatures = pending.get(file) ?? [];
    pending.delete(file);
    const previous = committed.get(file);
    committed.set(file, signatures);
    const names = Object.keys(exports);
    const nonComponents = names.filter((name) =>
      !RefreshRuntime.isLikelyComponentType(exports[name])
    );
    evaluations.set(file, {
      // A module without exports runs for its effects: nothing to swap.
      boundary: names.length > 0 && nonComponents.length === 0,
      nonComponents,
      signaturesChanged: previous !== undefined && (
        previous.join("\n") !== signatures.join("\n") ||
        signatures.some((signature) => signature.endsWith("!reset"))
      ),
    });
  },
  beginUpdate() {
    evaluations.clear();
  },
  evaluations,
};

declare global {
  var __REFRESH__: typeof refresh;
}
globalThis.__REFRESH__ = refresh;
