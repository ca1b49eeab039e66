/**
 * @module
 * The in-process layer in front of the shared page cache: the pages this process served last,
 * bounded by entries and by bytes, the least recently used going first. A `Map` keeps insertion
 * order, so moving a page to its end on each use makes its first key the least recently used.
 */
import type { HeldPage } from "./entry.ts";

export interface MemoryLayer {
  get(key: string): HeldPage | undefined;
  set(page: HeldPage): void;
  delete(key: string): void;
  /** Pages and bytes held, for tests and the bench. */
  readonly usage: { entries: number; bytes: number };
}

export function memoryLayer(maxEntries: number, maxBytes: number): MemoryLayer {
  const pages = new Map<string, HeldPage>();
  let bytes = 0;
  const remove = (key: string) => {
    const page = pages.get(key);
    if (!page) return;
    pages.delete(key);
    bytes -= page.size;
  };
  return {
    get(key) {
      const page = pages.get(key);
      if (page) {
        pages.delete(key);
        pages.set(key, page);
      }
      return page;
    },
    set(page) {
      remove(page.key);
      if (page.size > maxBytes || maxEntries === 0) return;
      pages.set(page.key, page);
      bytes += page.size;
      while (pages.size > maxEntries || bytes > maxBytes) remove(pages.keys().next().value!);
    },
    delete: remove,
    get usage() {
      return { entries: pages.size, bytes };
    },
  };
}
