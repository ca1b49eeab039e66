/**
 * @module
 * Hints to the other isolates a `BroadcastChannel` reaches - the other workers of `deno serve
 * --parallel` (threads of one process) and, on Deno Deploy, other isolates of the region - as
 * strings (tag_push.ts, stored_push.ts). The channel is made on first use and `unref`'d
 * (`node:worker_threads`' own has `unref`; the global one would keep a script alive); a message
 * that is not a string of at most `maxLength` is not ours, and is dropped.
 */
import { BroadcastChannel } from "node:worker_threads";

export interface HintChannel {
  /** Calls `listener` with each hint another isolate sends; the returned function stops it. */
  listen(listener: (hint: string) => void): () => void;
  /** Sends `hint` to every other isolate on the channel; one longer than the bound is not sent. */
  send(hint: string): void;
}

export function hintChannel(name: string, maxLength: number): HintChannel {
  const listeners = new Set<(hint: string) => void>();
  let channel: BroadcastChannel | undefined;
  const opened = () => {
    if (channel) return channel;
    channel = new BroadcastChannel(name);
    channel.unref();
    channel.onmessage = (event: unknown) => {
      const hint = (event as MessageEvent).data;
      if (typeof hint !== "string" || hint.length > maxLength) return;
      for (const listener of listeners) listener(hint);
    };
    return channel;
  };
  return {
    listen(listener) {
      opened();
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    send(hint) {
      if (hint.length <= maxLength) opened().postMessage(hint);
    },
  };
}
