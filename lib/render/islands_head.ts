/**
 * @module
 * What only a page that runs JavaScript needs (`Telemetry.head`: the browser SDK's tags), written
 * into its stream once, right before the island runtime's `<script>`. React writes that script
 * once, ahead of the page's first island wherever it renders: in `<head>` for one in the shell,
 * before the boundary of one streamed later, for an island in a Suspense fallback too. An island
 * cannot bring the tags itself: React drops a hoisted `<meta>` rendered in a fallback, and renders
 * a boundary's content before its fallback, so the page's first island may be one whose tags never
 * reach the page. Bytes are searched only once an island has rendered
 * (`RenderContextValue.islands`).
 */
import type { RenderContextValue } from "./context.ts";

const encoder = new TextEncoder();

/** The start of the runtime's tag as React writes it (`preinitModule`), made once per build. */
let runtime: { entry: string; tag: Uint8Array } | undefined;
function runtimeTag(entry: string): Uint8Array {
  if (runtime?.entry !== entry) runtime = { entry, tag: encoder.encode(`<script src="${entry}"`) };
  return runtime.tag;
}

/**
 * One page's writer: fed every chunk of its stream, then `finish`ed; or, for a page React has
 * finished with its shell, given all of it (`into`).
 */
export class IslandsHead {
  /** Holds the request's context (the telemetry's `head(c)`): let go of once asked. */
  #tags?: () => Uint8Array | undefined;
  readonly #context: RenderContextValue;
  /** The start of a chunk that may be the start of the runtime's tag: held for the next one. */
  #held?: Uint8Array;
  #done = false;

  constructor(tags: () => Uint8Array | undefined, context: RenderContextValue) {
    this.#tags = tags;
    this.#context = context;
  }

  /** Passes `chunk` on: with the tags before the runtime's script, if that begins in it. */
  write(chunk: Uint8Array, out: TransformStreamDefaultController<Uint8Array>): void {
    if (this.#done || !this.#context.islands) out.enqueue(chunk);
    else this.#search(chunk, out);
  }

  /**
   * Passes on what was held back, then `tail` (an error page shown in place of a failed boundary,
   * rendered apart from the page: its islands set no flag, so it is searched whatever it says).
   */
  finish(out: TransformStreamDefaultController<Uint8Array>, tail?: Uint8Array): void {
    if (tail && !this.#done) this.#search(tail, out);
    else if (tail) out.enqueue(tail);
    if (this.#held) out.enqueue(this.#held);
    this.#held = undefined;
  }

  /** A page React has finished, with the tags in. */
  into(page: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
    const tag = runtimeTag(this.#context.assets.boot.entry);
    const at = find(page, tag);
    const tags = at === -1 || at + tag.length > page.length ? undefined : this.#take();
    return tags ? spliced(page, at, tags) : page;
  }

  #take(): Uint8Array | undefined {
    const tags = this.#tags?.();
    this.#tags = undefined;
    return tags;
  }

  #search(chunk: Uint8Array, out: TransformStreamDefaultController<Uint8Array>): void {
    const data = this.#held ? concat(this.#held, chunk) : chunk;
    this.#held = undefined;
    const tag = runtimeTag(this.#context.assets.boot.entry);
    const at = find(data, tag);
    if (at === -1) return out.enqueue(data);
    if (at + tag.length > data.length) {
      if (at > 0) out.enqueue(data.subarray(0, at));
      this.#held = data.subarray(at);
      return;
    }
    this.#done = true;
    const tags = this.#take();
    out.enqueue(tags ? spliced(data, at, tags) : data);
  }
}

/** `data` with `tags` at `at`, in one chunk: each chunk costs a stream more than a copy. */
function spliced(data: Uint8Array, at: number, tags: Uint8Array): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(data.length + tags.length);
  bytes.set(data.subarray(0, at));
  bytes.set(tags, at);
  bytes.set(data.subarray(at), at + tags.length);
  return bytes;
}

/** Where `part` begins in `data`, or where a start of it ends `data`; -1 for neither. */
function find(data: Uint8Array, part: Uint8Array): number {
  for (let at = data.indexOf(part[0]); at !== -1; at = data.indexOf(part[0], at + 1)) {
    const end = Math.min(part.length, data.length - at);
    let i = 1;
    while (i < end && data[at + i] === part[i]) i++;
    if (i === end) return at;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(a.length + b.length);
  bytes.set(a);
  bytes.set(b, a.length);
  return bytes;
}
