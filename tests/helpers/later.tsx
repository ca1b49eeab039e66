/**
 * @module
 * `<Later>`: a component that suspends, then shows "Arrived", fails, or throws `notFound()` — the
 * piece every streaming test needs. `using timers = laterTimers()` clears what is still pending
 * when a test ends, so a page whose stream stopped early leaks no timer.
 */
import { use } from "react";
import { notFound } from "../../lib/mod.ts";

const pending = new Set<ReturnType<typeof setTimeout>>();
const cache = new WeakMap<object, Promise<string>>();

export interface LaterProps {
  /** How long it suspends (100 ms unless given). */
  ms?: number;
  /** Fails with this message instead of arriving. */
  fail?: string;
  notFound?: boolean;
}

// (React's dev build may call it without props to find its stack frame: hence the default.)
export function Later(props: LaterProps = {}) {
  let promise = cache.get(props);
  if (!promise) {
    promise = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(timer);
        if (props.notFound) reject(notFound());
        else if (props.fail) reject(new Error(props.fail));
        else resolve("Arrived");
      }, props.ms ?? 100);
      pending.add(timer);
    });
    cache.set(props, promise);
  }
  return <p>{use(promise)}</p>;
}

/** Clears, when disposed, the timers of every `<Later>` still waiting. */
export function laterTimers(): Disposable {
  return {
    [Symbol.dispose]() {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
    },
  };
}
